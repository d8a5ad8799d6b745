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
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Request } from 'autocannon';
import { DEMO_CREDENTIALS } from '../src/simulator/index.js';
import { ROOT, rssBytes, startEntry, startGateway, type Child } from './children.js';
import { basic, runLoad } from './load.js';
import { flag, numberSetting, setting } from './options.js';
import { DUPLICATES_QUERY, PAGE_QUERY, scenarios } from './scenarios.js';

const usage = `npm run soak [-- --name=value ...]   (or BENCH_NAME=value)
  --requests=100000   requests to send after the warm-up
  --connections=32
  --warmup=5000       requests before the baseline RSS is read
  --max-seconds=600   stop early after this long
  --latency=0         simulator latency (ms), own gateway only
  --url=              soak this running gateway (http://127.0.0.1:PORT) instead of starting one
  --pid=              its process id, for the RSS (Linux /proc)
  --out=bench/results`;

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

main().catch((error: unknown) => {
  console.error('soak failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
