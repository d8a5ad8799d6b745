/**
 * What response compression changes: bytes on the wire and time per request, for a 50-message
 * history page (one connection, then 32, with autocannon) and for the GraphiQL page, each with
 * and without `Accept-Encoding: gzip`, through one gateway against the simulator.
 *
 *   npm run bench:compression     (BENCH_DURATION seconds per run, default 4)
 */
import { request } from 'undici';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../src/simulator/index.js';
import { startEntry, startGateway } from './children.js';
import { basic, runLoad } from './load.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 4);
const TID = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
const PAGE = `{ number(tid: "${TID}") { history(start: 0, end: 50) { totalCount messages { id systemId sentAt tid phone direction body mms mediaUrl status { code text ok raw } } } } }`;
const AUTHORIZATION = basic(DEMO_CREDENTIALS.sysId, DEMO_CREDENTIALS.authToken);

async function bytesOf(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) {
  const started = performance.now();
  const response = await request(url, init);
  const body = Buffer.from(await response.body.arrayBuffer());
  return {
    bytes: body.length,
    ms: performance.now() - started,
    encoding: String(response.headers['content-encoding'] ?? 'identity'),
  };
}

async function main(): Promise<void> {
  const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
    BENCH_SIM_ACCOUNTS: '1',
  });
  const gateway = await startGateway({ UPSTREAM_URL: simulator.url, LOG_LEVEL: 'warn' });
  try {
    const endpoint = `${gateway.url}/graphql`;
    const post = (encoding: string | null) => ({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: AUTHORIZATION,
        ...(encoding ? { 'accept-encoding': encoding } : {}),
      },
      body: JSON.stringify({ query: PAGE }),
    });
    const graphiql = (encoding: string | null) => ({
      method: 'GET',
      headers: { accept: 'text/html', ...(encoding ? { 'accept-encoding': encoding } : {}) },
    });
    await bytesOf(endpoint, graphiql(null)); // the page's module loads on the first visit

    console.log('what            encoding   bytes      1 conn req/s  p50 ms   32 conn req/s');
    for (const encoding of [null, 'gzip']) {
      const once = await bytesOf(endpoint, post(encoding));
      const results = [];
      for (const connections of [1, 32]) {
        results.push(
          await runLoad({
            url: endpoint,
            connections,
            duration: DURATION,
            requestsFor: () => [{ ...post(encoding), path: '/graphql' }],
          }),
        );
      }
      const [one, many] = results;
      console.log(
        `50-message page  ${once.encoding.padEnd(9)}  ${String(once.bytes).padStart(9)}  ` +
          `${one!.rps.toFixed(0).padStart(12)}  ${(one!.latency.percentile(50) / 1000).toFixed(2).padStart(6)}  ` +
          `${many!.rps.toFixed(0).padStart(13)}`,
      );
    }
    for (const encoding of [null, 'gzip']) {
      const runs = [];
      for (let i = 0; i < 5; i += 1) runs.push(await bytesOf(endpoint, graphiql(encoding)));
      const ms = runs.map((r) => r.ms).sort((a, b) => a - b)[2] ?? 0;
      console.log(
        `GraphiQL page    ${runs[0]!.encoding.padEnd(9)}  ${String(runs[0]!.bytes).padStart(9)}  ` +
          `served in ${ms.toFixed(1)} ms (median of 5, loopback)`,
      );
    }
  } finally {
    await gateway.stop();
    await simulator.stop();
  }
}

await main();
