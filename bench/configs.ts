/**
 * `npm run bench:configs`: the production configurations beside the default, many accounts.
 * Each round starts one gateway per configuration in turn (`node dist/main.js`,
 * `NODE_ENV=production`) against the bench simulator: the default, the response cache on with
 * every request a miss (`CACHE_TTL_MS=1`), tracing at 1% sampling to a loopback OTLP sink, and an
 * allow-list (requests by hash). Each request is the next of 256 accounts over 32 connections, as
 * a router sends them. Reports req/s and the gateway's CPU per request (from /proc), and each
 * configuration's share of the default's req/s over the same rounds: the target is 90%.
 *
 *   npm run bench:configs [-- --query=small|page --seconds=8 --rounds=6]
 *
 * Six rounds by default: one round of this load swings ±30% on a 2-core host.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCredentials } from '../support/bench-accounts.js';
import { startEntry, startGateway, type Child } from './children.js';
import { basic, runLoad } from './load.js';
import { numberSetting, setting } from './options.js';
import { OWNED_QUERY } from './scenarios.js';

const ACCOUNTS = 256;
const CONNECTIONS = 32;
const QUERIES: Record<string, string> = {
  small: OWNED_QUERY,
  page: `{ number(tid: "TN-L-0001") { history(start: 0, end: 50) { tid number totalCount messages { id body sentAt direction status { code } } } } }`,
};
const query = QUERIES[setting('query', 'small')];
if (!query) throw new Error(`--query must be one of ${Object.keys(QUERIES).join(', ')}`);
const seconds = numberSetting('seconds', 8, 1);
const rounds = numberSetting('rounds', 6, 1);

/** An OTLP/HTTP sink that takes whatever is exported and drops it. */
const sink = createServer((request, response) => {
  request.resume();
  request.on('end', () =>
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
  );
}).listen(0, '127.0.0.1');
await new Promise((resolve) => sink.once('listening', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const hash = createHash('sha256').update(query).digest('hex');
const allowList = join(tmpdir(), `bench-configs-${process.pid}.json`);
writeFileSync(allowList, JSON.stringify({ [hash]: query }));

interface Configuration {
  readonly name: string;
  readonly env: Record<string, string>;
  /** Sends the document's hash, as an allow-listed client does. */
  readonly byHash?: boolean;
}
const CONFIGURATIONS: readonly Configuration[] = [
  { name: 'default', env: {} },
  { name: 'cache, every request a miss', env: { CACHE_TTL_MS: '1' } },
  {
    name: 'tracing 1%',
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    },
  },
  { name: 'allow-list', env: { PERSISTED_OPERATIONS: allowList }, byHash: true },
];

/** User and system CPU of a process so far, in ms (Linux /proc; 100 ticks a second). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function measure(simulator: Child, configuration: Configuration) {
  const gateway = await startGateway({
    UPSTREAM_URL: simulator.url,
    NODE_ENV: 'production',
    GATEWAY_SECRET: randomBytes(32).toString('hex'),
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'error',
    ...configuration.env,
  });
  try {
    const body = JSON.stringify(
      configuration.byHash
        ? { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }
        : { query },
    );
    const requestsFor = (vu: number) =>
      // Each connection walks through the accounts, so consecutive requests are other accounts'.
      Array.from({ length: ACCOUNTS / CONNECTIONS }, (_, i) => {
        const { sysId, authToken } = benchCredentials((vu + i * CONNECTIONS) % ACCOUNTS);
        const authorization = basic(sysId, authToken);
        return {
          method: 'POST' as const,
          path: '/graphql',
          headers: { 'content-type': 'application/json', authorization },
          body,
        };
      });
    const url = gateway.url;
    const first = await runLoad({ url, connections: CONNECTIONS, duration: 2, requestsFor });
    if (first.failures > 0) throw new Error(`${configuration.name}: ${first.failures} failures`);
    const before = cpuMs(gateway.pid);
    const run = await runLoad({ url, connections: CONNECTIONS, duration: seconds, requestsFor });
    const cpu = cpuMs(gateway.pid) - before;
    if (run.failures > 0) throw new Error(`${configuration.name}: ${run.failures} failures`);
    return { rps: run.rps, microsPerRequest: (cpu * 1000) / run.requests };
  } finally {
    await gateway.stop();
  }
}

const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
  BENCH_SIM_ACCOUNTS: String(ACCOUNTS),
});
const results = new Map<string, { rps: number; microsPerRequest: number }[]>();
try {
  // Alternating rounds: a drift of the host's speed touches every configuration alike.
  for (let round = 0; round < rounds; round += 1) {
    for (const configuration of CONFIGURATIONS) {
      const result = await measure(simulator, configuration);
      results.set(configuration.name, [...(results.get(configuration.name) ?? []), result]);
      console.error(
        `round ${round + 1} ${configuration.name}: ${Math.round(result.rps)} req/s, ${Math.round(result.microsPerRequest)} µs CPU a request`,
      );
    }
  }
} finally {
  await simulator.stop();
  sink.close();
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const defaultRps = mean(results.get('default')!.map((r) => r.rps));
console.log(
  `\n${setting('query', 'small')}, ${ACCOUNTS} accounts, ${rounds} rounds of ${seconds} s`,
);
console.log('configuration                 req/s  CPU µs/request  of the default');
for (const [name, runs] of results) {
  const rps = mean(runs.map((r) => r.rps));
  console.log(
    `${name.padEnd(28)} ${String(Math.round(rps)).padStart(6)} ${String(Math.round(mean(runs.map((r) => r.microsPerRequest)))).padStart(15)} ${(rps / defaultRps).toFixed(2).padStart(15)}x`,
  );
}
