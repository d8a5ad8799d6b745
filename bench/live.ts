/**
 * Idle live subscriptions: what 1,000 open `messageAdded` streams over 100 numbers cost the
 * gateway (RSS, V8 heap) and the service (polls per interval). 10 accounts own 10 numbers each;
 * every number has 10 subscribers (SSE over HTTP, one connection each). One poll loop per account
 * and number means about 100 polls per LIVE_POLL_MS, however many subscribers.
 *
 *   npm run bench:live            (BENCH_LIVE_SUBSCRIBERS, BENCH_LIVE_WINDOW_S to change)
 *
 * Then the doorbell (doorbell below): what 200 watched numbers cost the service with and without
 * rings, and how long an arrival takes to reach the subscriber (`-- doorbell` runs it alone):
 *
 *   npm run bench:live -- doorbell    (BENCH_DOORBELL_WINDOW_S to change)
 *
 * And a rolling restart under live traffic (rollingRestart below):
 *
 *   npm run bench:live -- rolling     (BENCH_LIVE_COPIES=2 on a struggling machine)
 */
import { Agent, request } from 'undici';
import { benchAccountNumbers, benchCredentials } from '../support/bench-accounts.js';
import WebSocket from 'ws';
import { startGrowingUpstream, type GrowingUpstream } from '../support/growing-upstream.js';
import {
  LIVE_ACCOUNT,
  LIVE_AUTHORIZATION,
  arrivals,
  closeRun,
  recorder,
  type Recorder,
} from '../support/live-fleet.js';
import { startLoopbackSwitch } from '../support/loopback-switch.js';
import { startRecordingUpstream, type RecordingUpstream } from '../support/recording-upstream.js';
import { createLiveSseClient, watchOverSse } from '../support/recipes/live-sse.js';
import { createLiveWsClient, watchOverWs } from '../support/recipes/live-ws.js';
import { startRedis, type RunningRedis } from '../support/redis.js';
import { rssBytes, startEntry, startGateway, type Child } from './children.js';

const ACCOUNTS = 10;
const NUMBERS_PER_ACCOUNT = 10;
const SUBSCRIBERS_PER_NUMBER = Number(process.env.BENCH_LIVE_SUBSCRIBERS ?? 10);
const POLL_MS = 3_000;
const WINDOW_S = Number(process.env.BENCH_LIVE_WINDOW_S ?? 15);

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

// --- Rolling restart --------------------------------------------------------------------------

/*
 * A rolling restart under live traffic: three gateway copies (dist/main.js) behind a loopback
 * balancer, a message arriving every second, 10 graphql-sse and 10 graphql-ws subscribers (the
 * recipes of docs/live-updates.md) spread over the copies. Each copy in turn is taken out of the
 * balancer, sent SIGTERM and replaced by a new one; the subscribers reconnect with their resume
 * tokens. Once without Redis, once with. Reported per run: messages lost, duplicated or out of
 * order (summed over subscribers), and the worst delay from arrival to receipt.
 *
 *   npm run bench:live -- rolling     (BENCH_LIVE_COPIES=2 on a struggling machine)
 */

const COPIES = Number(process.env.BENCH_LIVE_COPIES ?? 3);
const SUBSCRIBERS_PER_TRANSPORT = 10;
const ARRIVAL_MS = 1_000;
const ROLLING_POLL_MS = 500;
/** Traffic before the first restart, and between restarts. */
const SETTLE_MS = 3_000;
const HMAC_KEY = 'live-rolling-bench-key-0123456789abcdef';

const portOf = (copy: Child): number => Number(new URL(copy.url).port);

interface Outcome {
  readonly messages: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly outOfOrder: number;
  readonly worstDelayMs: number;
}

async function rollingRun(redis: RunningRedis | null, upstream: GrowingUpstream): Promise<Outcome> {
  const env = {
    UPSTREAM_URL: upstream.url,
    LIVE_POLL_MS: String(ROLLING_POLL_MS),
    CACHE_HMAC_KEY: HMAC_KEY,
    LOG_LEVEL: 'warn',
    ...(redis ? { REDIS_URL: redis.url } : {}),
  };
  const copies: Child[] = [];
  for (let i = 0; i < COPIES; i += 1) copies.push(await startGateway(env));
  const lb = await startLoopbackSwitch(...copies.map(portOf));
  const subscribers: Recorder[] = [];
  const stops: Array<() => void> = [];
  const stream = arrivals(upstream, ARRIVAL_MS);
  try {
    for (let i = 0; i < SUBSCRIBERS_PER_TRANSPORT; i += 1) {
      const sse = recorder(`sse-${i}`);
      const sseClient = createLiveSseClient(
        `http://127.0.0.1:${lb.port}/graphql`,
        LIVE_AUTHORIZATION,
      );
      stops.push(watchOverSse(sseClient, ['T-A'], sse), () => sseClient.dispose());
      const ws = recorder(`ws-${i}`);
      const wsClient = createLiveWsClient(`ws://127.0.0.1:${lb.port}/graphql`, LIVE_AUTHORIZATION, {
        webSocketImpl: WebSocket,
      });
      stops.push(watchOverWs(wsClient, ['T-A'], ws), () => void wsClient.dispose());
      subscribers.push(sse, ws);
    }
    // Everyone is live once a message reached them all.
    const firstCounted = stream.ids.length;
    while (
      !subscribers.every((s) => stream.ids.slice(firstCounted).some((id) => s.ids.includes(id)))
    )
      await sleep(100);
    const from = stream.ids.length;
    await sleep(SETTLE_MS);
    for (let i = 0; i < copies.length; i += 1) {
      const old = copies[i]!;
      lb.to(...copies.filter((c) => c !== old).map(portOf));
      await old.stop(); // SIGTERM; resolves on exit
      copies[i] = await startGateway(env);
      lb.to(...copies.map(portOf));
      await sleep(SETTLE_MS);
    }
    await closeRun(stream, subscribers, 30_000);

    const counted = stream.ids.slice(from);
    const addedAt = new Map(stream.ids.map((id, i) => [id, stream.at[i]!]));
    let lost = 0;
    let duplicated = 0;
    let outOfOrder = 0;
    let worstDelayMs = 0;
    for (const s of subscribers) {
      const got = s.ids.filter((id) => counted.includes(id));
      lost += counted.filter((id) => !got.includes(id)).length;
      duplicated += got.length - new Set(got).size;
      for (let i = 1; i < got.length; i += 1) {
        if (counted.indexOf(got[i]!) < counted.indexOf(got[i - 1]!)) outOfOrder += 1;
      }
      s.ids.forEach((id, i) => {
        if (counted.includes(id))
          worstDelayMs = Math.max(worstDelayMs, s.at[i]! - addedAt.get(id)!);
      });
    }
    return { messages: counted.length, lost, duplicated, outOfOrder, worstDelayMs };
  } finally {
    stream.stop();
    for (const stop of stops) stop();
    await Promise.all(copies.map((c) => c.stop()));
    await lb.close();
  }
}

async function rollingRestart(): Promise<void> {
  const upstream = await startGrowingUpstream(LIVE_ACCOUNT);
  let redis: RunningRedis | null = null;
  try {
    for (const withRedis of [false, true]) {
      redis = withRedis ? await startRedis() : null;
      const started = performance.now();
      const outcome = await rollingRun(redis, upstream);
      const took = ((performance.now() - started) / 1000).toFixed(0);
      console.log(
        `rolling restart of ${COPIES} copies ${withRedis ? 'with' : 'without'} Redis ` +
          `(${SUBSCRIBERS_PER_TRANSPORT} SSE + ${SUBSCRIBERS_PER_TRANSPORT} WebSocket subscribers, ` +
          `a message every ${ARRIVAL_MS} ms, LIVE_POLL_MS=${ROLLING_POLL_MS}, ${took} s): ` +
          `${outcome.messages} messages, lost ${outcome.lost}, duplicated ${outcome.duplicated}, ` +
          `out of order ${outcome.outOfOrder}, worst delay ${(outcome.worstDelayMs / 1000).toFixed(2)} s`,
      );
      await redis?.close();
      redis = null;
    }
  } finally {
    await redis?.close();
    await upstream.close();
  }
}

// --- The doorbell -----------------------------------------------------------------------------

/*
 * One account watching its 200 numbers in one subscription (SSE), a message arriving on one of
 * them every second. First without rings: every number polled every LIVE_POLL_MS. Then with each
 * number's webhook set to its `doorbellUrl` (as an operator would; the simulator then rings it on
 * each arrival), in a new subscription: rings poll, regular polls only as the safety net. The
 * window with rings spans a whole safety net, so its polls are counted too. Reported: the
 * service's calls per second (history reads of the account) and arrival-to-delivery percentiles.
 */

const DOORBELL_NUMBERS = 200;
const DOORBELL_ARRIVAL_MS = 1_000;
/** Without rings every poll comes every LIVE_POLL_MS: a few intervals measure it. */
const PLAIN_WINDOW_S = 15;
/** With rings: a whole safety net (60 s), so the regular polls it holds are counted. */
const RUNG_WINDOW_S = Number(process.env.BENCH_DOORBELL_WINDOW_S ?? 62);

interface Phase {
  readonly callsPerSecond: number;
  readonly delaysMs: number[];
}

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** A `messageAdded` stream of every number of the account; when each message id arrived. */
async function watchAll(
  gatewayUrl: string,
  headers: Record<string, string>,
  arrivedAt: Map<string, number>,
): Promise<{ close(): void }> {
  const abort = new AbortController();
  const response = await fetch(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query: 'subscription { messageAdded { id } }' }),
    signal: abort.signal,
  });
  if (response.status !== 200 || !response.body) throw new Error(`HTTP ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        for (const match of buffer.matchAll(/"id":"([^"]+)"/g)) {
          if (!arrivedAt.has(match[1]!)) arrivedAt.set(match[1]!, performance.now());
        }
        buffer = buffer.slice(Math.max(0, buffer.lastIndexOf('\n\n')));
      }
    } catch {
      // aborted
    }
  })();
  return { close: () => abort.abort() };
}

async function doorbellPhase(
  simulator: RecordingUpstream,
  gatewayUrl: string,
  windowS: number,
): Promise<Phase> {
  const { sysId, authToken } = benchCredentials(0);
  const headers = { 'x-sys-id': sysId, 'x-auth-token': authToken };
  const tids = benchAccountNumbers(DOORBELL_NUMBERS).map((n) => n.tid);
  const received = new Map<string, number>();
  const stream = await watchAll(gatewayUrl, headers, received);
  try {
    // Every loop has made its first look (200 reads at once), and a little more.
    await sleep(POLL_MS + 1_000);
    simulator.resetCalls();
    const sent = new Map<string, number>();
    const started = performance.now();
    const arriving = setInterval(() => {
      const tid = tids[Math.floor(Math.random() * tids.length)]!;
      const message = simulator.deliver(sysId, tid, 'doorbell bench');
      sent.set(message.message_id, performance.now());
    }, DOORBELL_ARRIVAL_MS);
    await sleep(windowS * 1_000);
    clearInterval(arriving);
    const elapsedS = (performance.now() - started) / 1_000;
    const calls = simulator.calls.filter(
      (c) => c.operation === 'smshistory' && c.accountSysId === sysId,
    ).length;
    await sleep(POLL_MS + 500); // the last arrivals are delivered
    const delaysMs = [...sent].map(([id, at]) => (received.get(id) ?? Infinity) - at);
    return { callsPerSecond: calls / elapsedS, delaysMs };
  } finally {
    stream.close();
  }
}

async function doorbell(): Promise<void> {
  const simulator = await startRecordingUpstream({
    benchAccounts: { count: 1, numbers: DOORBELL_NUMBERS },
  });
  const gateway = await startGateway({
    UPSTREAM_URL: simulator.url,
    LOG_LEVEL: 'warn',
    LIVE_POLL_MS: String(POLL_MS),
    GATEWAY_SECRET: 'doorbell-bench-secret-0123456789abcdef0123',
  });
  try {
    const plain = await doorbellPhase(simulator, gateway.url, PLAIN_WINDOW_S);
    // The operator's step: each number's webhook set to its doorbellUrl (a path here: no
    // GATEWAY_PUBLIC_URL, so the gateway's address goes in front).
    const { sysId, authToken } = benchCredentials(0);
    const answer = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sys-id': sysId, 'x-auth-token': authToken },
      body: JSON.stringify({ query: '{ ownedNumbers { tid doorbellUrl } }' }),
    });
    const { data } = (await answer.json()) as {
      data: { ownedNumbers: Array<{ tid: string; doorbellUrl: string }> };
    };
    const urls = new Map(data.ownedNumbers.map((n) => [n.tid, `${gateway.url}${n.doorbellUrl}`]));
    simulator.setWebhooks((tid) => urls.get(tid) ?? '', sysId);
    await sleep(500); // the first subscription's loops have stopped
    const rung = await doorbellPhase(simulator, gateway.url, RUNG_WINDOW_S);

    const line = (name: string, phase: Phase) => {
      const lost = phase.delaysMs.filter((d) => !Number.isFinite(d)).length;
      return (
        `  ${name}: ${phase.callsPerSecond.toFixed(1)} calls/s to the service; arrival to ` +
        `delivery p50 ${percentile(phase.delaysMs, 50).toFixed(0)} ms, ` +
        `p95 ${percentile(phase.delaysMs, 95).toFixed(0)} ms (${phase.delaysMs.length} messages` +
        `${lost > 0 ? `, ${lost} not delivered` : ''})`
      );
    };
    console.log(
      `doorbell: ${DOORBELL_NUMBERS} watched numbers, one message a second, LIVE_POLL_MS=${POLL_MS}`,
    );
    console.log(line(`without rings (${PLAIN_WINDOW_S} s)`, plain));
    console.log(line(`with rings (${RUNG_WINDOW_S} s)  `, rung));
    console.log(
      `  with rings: ${((100 * rung.callsPerSecond) / plain.callsPerSecond).toFixed(1)}% of the calls ` +
        `(target at most 10%), p50 ${percentile(rung.delaysMs, 50).toFixed(0)} ms (target at most 300 ms)`,
    );
  } finally {
    await gateway.stop();
    await simulator.close();
  }
}

if (process.argv.includes('rolling')) {
  await rollingRestart();
} else if (process.argv.includes('doorbell')) {
  await doorbell();
} else {
  await main();
  await doorbell();
}
