/**
 * A team beside a poller: one account asks from 32 connections as fast as it can, alone, then
 * beside another account asking once every 50 ms (20 a second), in alternation. Admission must
 * leave the team at least 60% of its rate alone (the poller's requests take the next seat; no
 * account is capped), and answer the poller quickly.
 *
 *   npm run bench:poller     (BENCH_DURATION seconds per run, default 5; BENCH_ROUNDS, default 2)
 */
import { request } from 'undici';
import { benchCredentials } from '../support/bench-accounts.js';
import { startEntry, startGateway } from './children.js';
import { basic, runLoad } from './load.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const POLL_EVERY_MS = 50;
const BODY = JSON.stringify({ query: '{ ownedNumbers { tid number } }' });
const headersOf = (index: number) => {
  const { sysId, authToken } = benchCredentials(index);
  return { 'content-type': 'application/json', authorization: basic(sysId, authToken) };
};

async function teamRun(endpoint: string): Promise<number> {
  const result = await runLoad({
    url: endpoint,
    connections: 32,
    duration: DURATION,
    requestsFor: () => [{ method: 'POST', path: '/graphql', headers: headersOf(0), body: BODY }],
  });
  if (result.failures > 0) throw new Error(`the team's load had ${result.failures} failures`);
  return result.rps;
}

/** Polls until `running()` is false; resolves with each poll's latency in ms. */
async function poll(endpoint: string, running: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (running()) {
    const started = performance.now();
    const response = await request(endpoint, { method: 'POST', headers: headersOf(1), body: BODY });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`a poll answered ${response.statusCode}`);
    const took = performance.now() - started;
    latencies.push(took);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, POLL_EVERY_MS - took)));
  }
  return latencies;
}

async function main(): Promise<void> {
  const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
    BENCH_SIM_ACCOUNTS: '2',
  });
  const gateway = await startGateway({ UPSTREAM_URL: simulator.url, LOG_LEVEL: 'warn' });
  try {
    const endpoint = `${gateway.url}/graphql`;
    await teamRun(endpoint); // warm-up: documents compiled, both accounts verified
    console.log('round  alone req/s  beside req/s  kept   poller p50 ms  polls');
    for (let round = 1; round <= ROUNDS; round++) {
      const alone = await teamRun(endpoint);
      let running = true;
      const polls = poll(endpoint, () => running);
      const beside = await teamRun(endpoint);
      running = false;
      const latencies = (await polls).sort((a, b) => a - b);
      const p50 = latencies[Math.floor(latencies.length / 2)] ?? Number.NaN;
      const kept = beside / alone;
      console.log(
        `${String(round).padEnd(6)} ${alone.toFixed(0).padStart(11)}  ${beside.toFixed(0).padStart(12)}  ${kept.toFixed(2)}  ${p50.toFixed(1).padStart(13)}  ${latencies.length}`,
      );
      console.log(kept >= 0.6 ? '  met: kept at least 60%' : '  MISSED: kept under 60%');
    }
  } finally {
    await gateway.stop();
    await simulator.stop();
  }
}

await main();
