/**
 * Idle live subscriptions: what 1,000 open `messageAdded` streams over 100 numbers cost the
 * gateway (RSS, V8 heap) and the service (polls per interval). 10 accounts own 10 numbers each;
 * every number has 10 subscribers (SSE over HTTP, one connection each). One poll loop per account
 * and number means about 100 polls per LIVE_POLL_MS, however many subscribers.
 *
 *   npm run bench:live            (LIVE_BENCH_SUBSCRIBERS, LIVE_BENCH_WINDOW_S to change)
 */
import { Agent, request } from 'undici';
import { benchAccountNumbers, benchCredentials } from '../src/simulator/index.js';
import { rssBytes, startEntry, startGateway, type Child } from './children.js';

const ACCOUNTS = 10;
const NUMBERS_PER_ACCOUNT = 10;
const SUBSCRIBERS_PER_NUMBER = Number(process.env.LIVE_BENCH_SUBSCRIBERS ?? 10);
const POLL_MS = 3_000;
const WINDOW_S = Number(process.env.LIVE_BENCH_WINDOW_S ?? 15);

interface Gc {
  readonly rss: number;
  readonly heapUsed: number;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function historyCalls(simulator: Child): Promise<number> {
  return (await simulator.ask<{ total: number }>({ type: 'calls' })).total;
}

async function liveGauge(gateway: Child, kind: 'subscriptions' | 'topics'): Promise<number> {
  const response = await request(`${gateway.url}/metrics`);
  const text = await response.body.text();
  const match = new RegExp(`sms_live_subscriptions\\{kind="${kind}"\\} (\\d+)`).exec(text);
  return Number(match?.[1] ?? 0);
}

async function main(): Promise<void> {
  const simulator = await startEntry('simulator', 'bench/simulator-process.ts', {
    BENCH_SIM_ACCOUNTS: String(ACCOUNTS),
    BENCH_SIM_NUMBERS: String(NUMBERS_PER_ACCOUNT),
  });
  const gateway = await startGateway(
    {
      UPSTREAM_URL: simulator.url,
      LOG_LEVEL: 'warn',
      LIVE_POLL_MS: String(POLL_MS),
      LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT: String(NUMBERS_PER_ACCOUNT * SUBSCRIBERS_PER_NUMBER),
    },
    ['--expose-gc'],
  );
  const agent = new Agent({ connections: null, keepAliveTimeout: 60_000 });
  const streams: Array<{ destroy(): void }> = [];
  try {
    const idle = await gateway.ask<Gc>({ type: 'gc' });
    const rssIdle = rssBytes(gateway.pid);
    const numbers = benchAccountNumbers(NUMBERS_PER_ACCOUNT);
    const total = ACCOUNTS * NUMBERS_PER_ACCOUNT * SUBSCRIBERS_PER_NUMBER;
    const opened = performance.now();
    const opening: Promise<void>[] = [];
    for (let a = 0; a < ACCOUNTS; a += 1) {
      const { sysId, authToken } = benchCredentials(a);
      for (const number of numbers) {
        for (let s = 0; s < SUBSCRIBERS_PER_NUMBER; s += 1) {
          opening.push(
            request(`${gateway.url}/graphql`, {
              method: 'POST',
              dispatcher: agent,
              headers: {
                'content-type': 'application/json',
                accept: 'text/event-stream',
                'x-sys-id': sysId,
                'x-auth-token': authToken,
              },
              body: JSON.stringify({
                query: `subscription { messageAdded(tids: ["${number.tid}"]) { id } }`,
              }),
            }).then((response) => {
              if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}`);
              response.body.on('data', () => undefined);
              streams.push(response.body);
            }),
          );
        }
      }
    }
    await Promise.all(opening);
    for (let i = 0; i < 300 && (await liveGauge(gateway, 'subscriptions')) < total; i += 1) {
      await sleep(100);
    }
    const openMs = performance.now() - opened;
    const subscriptions = await liveGauge(gateway, 'subscriptions');
    const topics = await liveGauge(gateway, 'topics');
    await sleep(POLL_MS); // every loop has made its first poll
    const before = await historyCalls(simulator);
    await sleep(WINDOW_S * 1_000);
    const polls = (await historyCalls(simulator)) - before;
    const held = await gateway.ask<Gc>({ type: 'gc' });
    const rssHeld = rssBytes(gateway.pid);
    const perInterval = polls / ((WINDOW_S * 1_000) / POLL_MS);

    console.log(
      `live: ${subscriptions} idle subscriptions over ${topics} numbers (${ACCOUNTS} accounts), ` +
        `opened in ${(openMs / 1000).toFixed(1)} s, LIVE_POLL_MS=${POLL_MS}`,
    );
    console.log(
      `  upstream polls: ${polls} in ${WINDOW_S} s = ${perInterval.toFixed(1)} per interval ` +
        `(one per number would be ${topics}; one per subscriber ${subscriptions})`,
    );
    console.log(
      `  gateway RSS ${mb(rssIdle)} -> ${mb(rssHeld)} (+${mb(rssHeld - rssIdle)}), ` +
        `V8 heap after GC ${mb(idle.heapUsed)} -> ${mb(held.heapUsed)} ` +
        `(${((held.heapUsed - idle.heapUsed) / Math.max(1, subscriptions) / 1e3).toFixed(1)} kB per subscription)`,
    );
  } finally {
    for (const stream of streams) stream.destroy();
    await agent.close().catch(() => undefined);
    await gateway.stop();
    await simulator.stop();
  }
}

await main();
