/**
 * Two built copies (dist/main.js) on a real redis-server, messages arriving every 150 ms, with
 * the recipes' clients (support/recipes/): a kill -9 of the copy holding the poll lock (the
 * other takes over within 2 x LIVE_POLL_MS, logged and counted; subscribers of the dead copy
 * reconnect through a loopback switch and resume), and a Redis restart (every subscriber gets
 * the messages of the outage once, or one RESYNC_REQUIRED; one warning per outage). Every
 * message counted exactly once, in order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { GatewayProcess } from '../fixtures/gateway-process.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import {
  LIVE_ACCOUNT,
  LIVE_AUTHORIZATION,
  arrivals,
  closeRun,
  exited,
  expectedFor,
  logLines,
  metricOf,
  portOf,
  recorder,
  startLiveCopy,
  type Recorder,
} from '../../support/live-fleet.js';
import { startLoopbackSwitch, type LoopbackSwitch } from '../../support/loopback-switch.js';
import { createLiveSseClient, watchOverSse } from '../../support/recipes/live-sse.js';
import { createLiveWsClient, watchOverWs } from '../../support/recipes/live-ws.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';
import { until } from '../../support/wait.js';

const POLL_MS = 300;

let upstream: GrowingUpstream | undefined;
let redis: RunningRedis | undefined;
let lb: LoopbackSwitch | undefined;
const copies: GatewayProcess[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await Promise.all(copies.splice(0).map((copy) => copy.close()));
  await lb?.close();
  await redis?.close();
  await upstream?.close();
  lb = redis = upstream = undefined;
});

async function copy(): Promise<GatewayProcess> {
  const started = await startLiveCopy(upstream!, POLL_MS, { REDIS_URL: redis!.url });
  copies.push(started);
  return started;
}

function overSse(name: string, url: string): Recorder {
  const subscriber = recorder(name);
  const client = createLiveSseClient(url, LIVE_AUTHORIZATION);
  cleanups.push(() => client.dispose());
  cleanups.push(watchOverSse(client, ['T-A'], subscriber));
  return subscriber;
}

function overWs(name: string, url: string): Recorder {
  const subscriber = recorder(name);
  const client = createLiveWsClient(url, LIVE_AUTHORIZATION, { webSocketImpl: WebSocket });
  cleanups.push(() => client.dispose());
  cleanups.push(watchOverWs(client, ['T-A'], subscriber));
  return subscriber;
}

const wsUrl = (copy: GatewayProcess) => copy.endpoint.replace(/^http/, 'ws');

describe('two copies on one Redis', () => {
  it('kill -9 of the lock holder: the other copy takes over within 2 x LIVE_POLL_MS, nothing lost or repeated', async () => {
    upstream = await startGrowingUpstream(LIVE_ACCOUNT);
    redis = await startRedis();
    const a = await copy();
    lb = await startLoopbackSwitch(portOf(a));
    const stream = arrivals(upstream, 150);
    cleanups.push(() => stream.stop());
    // A's subscriber comes first: A takes the lock and polls.
    const onA = overSse('graphql-sse on A', `http://127.0.0.1:${lb.port}/graphql`);
    await until(() => onA.ids.length >= 2, 10_000);
    const b = await copy();
    const sseOnB = overSse('graphql-sse on B', b.endpoint);
    const wsOnB = overWs('graphql-ws on B', wsUrl(b));
    const everyone = [onA, sseOnB, wsOnB];
    await until(() => everyone.every((s) => s.ids.length >= 2), 10_000);
    expect(await metricOf(a, 'sms_live_poll_locks_held')).toBe(1);
    expect(await metricOf(b, 'sms_live_poll_locks_held')).toBe(0);

    lb.to(portOf(b));
    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    const killedAtPerf = performance.now();
    await exited(a);
    const arrivedAtKill = stream.addOne();
    await until(() => sseOnB.ids.includes(arrivedAtKill) && wsOnB.ids.includes(arrivedAtKill));
    const delays = [sseOnB, wsOnB].map((s) => s.at[s.ids.indexOf(arrivedAtKill)]! - killedAtPerf);
    const [tookOver, ...more] = logLines(b, 'took over polling');
    expect(more).toEqual([]);
    const takeoverMs = Date.parse(tookOver!.time) - killedAt;
    // The lock lapses 1.5 intervals after A's last renewal, and B asks every half interval.
    expect(takeoverMs).toBeLessThanOrEqual(2 * POLL_MS);
    expect(await metricOf(b, 'sms_live_takeovers_total')).toBe(1);
    // The takeover's first poll finds it; delivery adds pub/sub and the stream.
    for (const delay of delays) expect(delay).toBeLessThanOrEqual(3 * POLL_MS);

    await until(() => onA.ids.includes(arrivedAtKill), 15_000);
    await closeRun(stream, everyone);
    for (const subscriber of everyone) {
      expect(subscriber.errors, subscriber.name).toEqual([]);
      expect(subscriber.ids, subscriber.name).toEqual(expectedFor(subscriber, stream.ids));
    }
  });

  it('a Redis restart: the messages of the outage reach every subscriber once (or one RESYNC_REQUIRED); one warning per outage', async () => {
    upstream = await startGrowingUpstream(LIVE_ACCOUNT);
    redis = await startRedis();
    const port = redis.port;
    const [a, b] = await Promise.all([copy(), copy()]);
    const stream = arrivals(upstream, 150);
    cleanups.push(() => stream.stop());
    const everyone = [
      overSse('graphql-sse on A', a!.endpoint),
      overWs('graphql-ws on A', wsUrl(a!)),
      overSse('graphql-sse on B', b!.endpoint),
      overWs('graphql-ws on B', wsUrl(b!)),
    ];
    await until(() => everyone.every((s) => s.ids.length >= 2), 10_000);

    await redis.close();
    const outageFrom = stream.ids.length;
    // Messages arrive while Redis is down.
    await until(() => stream.ids.length >= outageFrom + 6, 5_000);
    redis = await startRedis({ port });
    const outage = stream.ids.slice(outageFrom, stream.ids.length);
    const after = stream.ids.length;
    await until(
      () => everyone.every((s) => s.resyncs === 1 || s.ids.includes(stream.ids[after + 3] ?? '')),
      15_000,
    );
    stream.stop();
    const live = everyone.filter((s) => s.resyncs === 0);
    await closeRun(stream, live);

    for (const subscriber of everyone) {
      expect(subscriber.errors, subscriber.name).toEqual([]);
      if (subscriber.resyncs === 0) {
        expect(subscriber.ids, subscriber.name).toEqual(expectedFor(subscriber, stream.ids));
        expect(subscriber.ids, subscriber.name).toEqual(expect.arrayContaining(outage));
      } else {
        // Told once to refetch; what it had until then was in order, nothing twice.
        expect(subscriber.resyncs, subscriber.name).toBe(1);
        const got = expectedFor(subscriber, stream.ids).slice(0, subscriber.ids.length);
        expect(subscriber.ids, subscriber.name).toEqual(got);
      }
    }
    for (const gateway of [a!, b!]) {
      expect(logLines(gateway, 'live updates: Redis unavailable')).toHaveLength(1);
      expect(logLines(gateway, 'live updates: Redis reachable again')).toHaveLength(1);
    }
  });
});
