/**
 * `npm run soak`: a bounded soak of the gateway, for memory. Sends `--requests` requests (a mix
 * of the bench's small list, 50-message page and duplicate-heavy queries) over `--connections`
 * connections and reports the gateway's resident set size from /proc/<pid>/status: fresh,
 * after a warm-up, during the run, at the end, and after a full GC.
 *
 * By default it starts its own simulator and gateway (dist/main.js, with --expose-gc so the GC can
 * be asked for over the child's private IPC channel); `--url=http://127.0.0.1:4000 --pid=<pid>`
 * soaks a gateway that is already running instead (on the built-in simulator's demo account,
 * since that is what `npm start` serves; no GC figure then). Loopback only; it stops after
 * `--requests` or `--max-seconds`, whichever comes first.
 *
 * `--scenario=cache-flood` soaks the response cache instead (see floodCache below): one account
 * sends only distinct operations with large answers, the load that grew an unbounded cache by a
 * gigabyte in 30 s; the RSS should stay flat under CACHE_MAX_BYTES.
 *
 * `--scenario=floods` runs the tenancy floods one after the other, `--flood-seconds` each
 * (bench/floods.ts: invented credentials, node lists, WebSocket frames, APQ hashes, one sys_id
 * with many tokens), then the attacks' (bench/attack-floods.ts: aliased histories in full and at
 * half size, GraphiQL reloads, idle WebSockets of invented pairs, slow headers, which lasts at
 * least 12 s); `--scenario=<flood>` runs one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Request } from 'autocannon';
import { DEMO_CREDENTIALS } from '../src/simulator/index.js';
import { benchCredentials } from '../support/bench-accounts.js';
import { ROOT, rssBytes, startEntry, startGateway, type Child } from './children.js';
import { basic, runLoad } from './load.js';
import { flag, numberSetting, setting } from './options.js';
import { DUPLICATES_QUERY, PAGE_QUERY, scenarios } from './scenarios.js';
import { FLOODS, floodLines, runFlood, type Flood, type FloodResult } from './floods.js';

const usage = `npm run soak [-- --name=value ...]   (or BENCH_NAME=value)
  --requests=100000   requests to send after the warm-up
  --connections=32
  --warmup=5000       requests before the baseline RSS is read
  --max-seconds=600   stop early after this long
  --latency=0         simulator latency (ms), own gateway only
  --url=              soak this running gateway (http://127.0.0.1:PORT) instead of starting one
  --pid=              its process id, for the RSS (Linux /proc)
  --out=bench/results
  --scenario=mix      or cache-flood: distinct large answers from one account, cache on
  --seconds=30        cache-flood: how long to flood
  --cache-max-bytes=  cache-flood: the gateway's CACHE_MAX_BYTES (default: the gateway's own)
  --cache-ttl=600000  cache-flood: its CACHE_TTL_MS (0: the same load with the cache off)
  --scenario=floods   the tenancy and attack floods, each for --flood-seconds (or one: ${FLOODS.join(', ')})
  --flood-seconds=10  (slow-headers: at least 12, so the gateway's 10 s headers timeout fires in it)`;

const SCENARIOS = ['mix', 'cache-flood', 'floods', ...FLOODS];
if (!SCENARIOS.includes(setting('scenario', 'mix'))) {
  console.error(`--scenario must be one of ${SCENARIOS.join(', ')}\n\n${usage}`);
  process.exit(2);
}

if (flag('help')) {
  console.log(usage);
  process.exit(0);
}

const settings = {
  requests: numberSetting('requests', 100_000, 1),
  connections: numberSetting('connections', 32, 1),
  warmup: numberSetting('warmup', 5_000, 0),
  maxSeconds: numberSetting('max-seconds', 600, 1),
  latencyMs: numberSetting('latency', 0),
  url: setting('url', ''),
  pid: setting('pid', ''),
  out: setting('out', join(ROOT, 'bench', 'results')),
  scenario: setting('scenario', 'mix'),
  seconds: numberSetting('seconds', 30, 1),
  cacheMaxBytes: setting('cache-max-bytes', ''),
  cacheTtlMs: setting('cache-ttl', '600000'),
  floodSeconds: numberSetting('flood-seconds', 10, 1),
};

/** Megabytes (10^6 bytes), the unit of the memory target. */
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** The bench's gateway requests of scenarios a, b and d, in turn, each user on its own account. */
function ownAccountRequests(vu: number): Request[] {
  const all = scenarios({ fanOutNumbers: 7 });
  return (['a', 'b', 'd'] as const).flatMap((id) => all[id].targets.gateway?.(vu) ?? []);
}

/** The same mix on the demo account, for a gateway started with `npm start`. */
function demoRequests(): Request[] {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    authorization: basic(DEMO_CREDENTIALS.sysId, DEMO_CREDENTIALS.authToken),
  };
  const post = (body: unknown): Request => ({
    method: 'POST',
    path: '/graphql',
    headers,
    body: JSON.stringify(body),
  });
  return [
    post({ query: '{ ownedNumbers { tid number } }' }),
    post({ query: PAGE_QUERY, variables: { tid: 'TN-L-0001', start: 0, end: 50 } }),
    post({ query: DUPLICATES_QUERY, variables: { tid: 'TN-L-0001' } }),
  ];
}

const signed = (bytes: number): string => `${bytes >= 0 ? '+' : ''}${mb(bytes)}`;

interface Collected {
  readonly rss: number;
  readonly heapUsed: number;
}

/** A full GC in our own gateway child, and what it holds after it; null for another gateway. */
async function collect(gateway: Child | null): Promise<Collected | null> {
  if (!gateway) return null;
  const reply = await gateway.ask<{ collected: boolean } & Collected>({ type: 'gc' });
  return reply.collected ? { rss: reply.rss, heapUsed: reply.heapUsed } : null;
}

async function main(): Promise<void> {
  const children: Child[] = [];
  let url = settings.url.replace(/\/+$/, '').replace(/\/graphql$/, '');
  let pid = settings.pid === '' ? null : Number(settings.pid);
  let gateway: Child | null = null;
  if (url === '') {
    const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
      BENCH_SIM_LATENCY_MS: String(settings.latencyMs),
      BENCH_SIM_ACCOUNTS: String(settings.connections),
    });
    children.push(simulator);
    gateway = await startGateway({ UPSTREAM_URL: simulator.url }, ['--expose-gc']);
    children.push(gateway);
    url = gateway.url;
    pid = gateway.pid;
  } else if (!/^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(url)) {
    throw new Error('--url must be a loopback address, e.g. http://127.0.0.1:4000');
  }
  const requestsFor = settings.url === '' ? ownAccountRequests : demoRequests;
  const rss = (): number | null => (pid === null ? null : rssBytes(pid));

  try {
    const fresh = rss();
    console.log(
      `soak: ${url}/graphql, pid ${pid ?? 'unknown'}; fresh RSS ${fresh === null ? 'n/a' : mb(fresh)}`,
    );
    if (settings.warmup > 0) {
      await runLoad({
        url,
        connections: settings.connections,
        amount: settings.warmup,
        requestsFor,
      });
    }
    const baseline = rss();
    const baselineGc = await collect(gateway);
    console.log(
      `after ${settings.warmup} warm-up requests: ${baseline === null ? 'n/a' : mb(baseline)}` +
        (baselineGc
          ? `; after a full GC ${mb(baselineGc.rss)}, V8 heap in use ${mb(baselineGc.heapUsed)}`
          : ''),
    );

    const samples: { seconds: number; rssBytes: number }[] = [];
    const started = Date.now();
    const sampler = setInterval(() => {
      const value = rss();
      if (value !== null) samples.push({ seconds: (Date.now() - started) / 1000, rssBytes: value });
    }, 2_000);
    const result = await runLoad({
      url,
      connections: settings.connections,
      amount: settings.requests,
      maxSeconds: settings.maxSeconds,
      requestsFor,
    });
    clearInterval(sampler);
    const after = rss();
    const afterGc = await collect(gateway);
    const peak = Math.max(...samples.map((s) => s.rssBytes), after ?? 0);

    console.log(
      `${result.requests} requests in ${result.seconds.toFixed(1)} s (${result.rps.toFixed(0)} req/s), ` +
        `${result.failures} failed; p50 ${(result.latency.percentile(50) / 1000).toFixed(2)} ms, ` +
        `p99 ${(result.latency.percentile(99) / 1000).toFixed(2)} ms`,
    );
    if (baseline !== null && after !== null) {
      const growth = after - baseline;
      console.log(`RSS after the run: ${mb(after)} (${signed(growth)}), peak ${mb(peak)}`);
      if (afterGc && baselineGc) {
        console.log(
          `after a full GC: RSS ${mb(afterGc.rss)} (${signed(afterGc.rss - baselineGc.rss)} on the ` +
            `warm-up's, also after GC), V8 heap in use ${mb(afterGc.heapUsed)} ` +
            `(${signed(afterGc.heapUsed - baselineGc.heapUsed)})`,
        );
      }
      const met = growth < 30e6 && result.requests >= 100_000;
      console.log(
        `${met ? 'MET   ' : 'MISSED'}  RSS growth < 30 MB over 100k requests: ` +
          `${signed(growth)} over ${result.requests} requests (as read, no GC forced)`,
      );
    }
    mkdirSync(settings.out, { recursive: true });
    const file = join(settings.out, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          settings,
          requests: result.requests,
          seconds: result.seconds,
          rps: result.rps,
          failures: result.failures,
          rss: {
            freshBytes: fresh,
            baselineBytes: baseline,
            afterBytes: after,
            afterGcBytes: afterGc,
            peakBytes: peak,
          },
          samples,
        },
        null,
        2,
      ),
    );
    console.log(`results: ${file}`);
    if (result.failures > 0) process.exitCode = 1;
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

/** Aliases per flood request cycle through 1..FLOOD_MAX_ALIASES (the gateway allows 30). */
const FLOOD_MAX_ALIASES = 30;

/**
 * A distinct operation (its name carries a counter) asking for `aliases` copies of a 1,000-message
 * range of the load-test account's largest number (450 messages), so answers run from ~150 kB
 * (stored) to several MB (over the 1 MiB FIXED_CACHE_MAX_ENTRY_BYTES, refused).
 */
function floodQuery(counter: number, aliases: number): string {
  const fields = Array.from(
    { length: aliases },
    (_, i) =>
      `h${i}: history(start: 0, end: 1000) { totalCount messages { id systemId sentAt tid phone direction body mms mediaUrl status { code text ok raw } } }`,
  );
  return `query Flood${counter} { number(tid: "TN-L-0001") { tid ${fields.join(' ')} } }`;
}

/**
 * cache-flood: the response cache on (answers kept 10 min, stale for 10 min more), `connections`
 * workers of one account sending distinct operations for `seconds`; RSS sampled every second.
 */
async function floodCache(): Promise<void> {
  const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
    BENCH_SIM_ACCOUNTS: '1',
  });
  const env: Record<string, string> = {
    UPSTREAM_URL: simulator.url,
    CACHE_TTL_MS: settings.cacheTtlMs,
    CACHE_STALE_IF_ERROR_MS: '600000',
    LOG_LEVEL: 'warn',
  };
  if (settings.cacheMaxBytes !== '') env.CACHE_MAX_BYTES = settings.cacheMaxBytes;
  const gateway = await startGateway(env, ['--expose-gc']);
  const credentials = benchCredentials(0);
  const authorization = basic(credentials.sysId, credentials.authToken);
  try {
    const fresh = rssBytes(gateway.pid);
    console.log(
      `cache-flood: ${gateway.url}/graphql, pid ${gateway.pid}, CACHE_TTL_MS ${settings.cacheTtlMs}, ` +
        `CACHE_MAX_BYTES ${settings.cacheMaxBytes || 'default'}; fresh RSS ${mb(fresh)}`,
    );
    let counter = 0;
    let answered = 0;
    let failed = 0;
    let bytes = 0;
    const started = Date.now();
    const deadline = started + settings.seconds * 1000;
    const samples: { seconds: number; rssBytes: number }[] = [];
    const sampler = setInterval(() => {
      samples.push({ seconds: (Date.now() - started) / 1000, rssBytes: rssBytes(gateway.pid) });
    }, 1_000);
    const worker = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const n = (counter += 1);
        const response = await fetch(`${gateway.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ query: floodQuery(n, 1 + (n % FLOOD_MAX_ALIASES)) }),
        });
        const text = await response.text();
        bytes += text.length;
        if (response.ok && !text.includes('"errors"')) answered += 1;
        else failed += 1;
      }
    };
    await Promise.all(Array.from({ length: settings.connections }, worker));
    clearInterval(sampler);
    const after = rssBytes(gateway.pid);
    const afterGc = await collect(gateway);
    const peak = Math.max(after, ...samples.map((s) => s.rssBytes));
    const seconds = (Date.now() - started) / 1000;
    const at = (t: number): string => {
      const sample = samples.find((s) => s.seconds >= t);
      return sample ? mb(sample.rssBytes) : 'n/a';
    };
    console.log(
      `${answered} distinct answers (${failed} failed) in ${seconds.toFixed(1)} s, ${mb(bytes)} sent`,
    );
    console.log(
      `RSS: fresh ${mb(fresh)}, at 5 s ${at(5)}, at 10 s ${at(10)}, at 20 s ${at(20)}, ` +
        `end ${mb(after)}, peak ${mb(peak)}` +
        (afterGc ? `; after a full GC ${mb(afterGc.rss)}, V8 heap ${mb(afterGc.heapUsed)}` : ''),
    );
    mkdirSync(settings.out, { recursive: true });
    const file = join(
      settings.out,
      `soak-cache-flood-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    );
    writeFileSync(
      file,
      JSON.stringify(
        { settings, answered, failed, seconds, rss: { fresh, after, afterGc, peak }, samples },
        null,
        2,
      ),
    );
    console.log(`results: ${file}`);
    if (failed > 0) process.exitCode = 1;
  } finally {
    await gateway.stop();
    await simulator.stop();
  }
}

/** The tenancy floods (bench/floods.ts), one after the other; results to `--out`. */
async function floods(): Promise<void> {
  const which = settings.scenario === 'floods' ? [...FLOODS] : [settings.scenario as Flood];
  const results: FloodResult[] = [];
  for (const flood of which) {
    console.log(`flood ${flood}: ${settings.floodSeconds} s`);
    const result = await runFlood(flood, settings.floodSeconds);
    results.push(result);
    for (const line of floodLines(result)) console.log(line);
  }
  mkdirSync(settings.out, { recursive: true });
  const file = join(
    settings.out,
    `soak-floods-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  );
  writeFileSync(file, JSON.stringify({ settings, results }, null, 2));
  console.log(`results: ${file}`);
  if (results.some((r) => r.failures.length > 0)) process.exitCode = 1;
}

(settings.scenario === 'cache-flood'
  ? floodCache()
  : settings.scenario === 'mix'
    ? main()
    : floods()
).catch((error: unknown) => {
  console.error('soak failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
