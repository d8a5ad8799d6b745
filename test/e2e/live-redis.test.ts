/**
 * Two built copies (dist/main.js) on a real redis-server, messages arriving every 150 ms, with
 * the recipes' clients (support/recipes/): a kill -9 of the copy holding the poll lock (the
 * other takes over within 2 x LIVE_POLL_MS, logged and counted; subscribers of the dead copy
 * reconnect through a loopback switch and resume), and a Redis restart (every subscriber gets
 * the messages of the outage once, or one RESYNC_REQUIRED; one warning per outage). Every
 * message counted exactly once, in order.
 */
import { describe, expect, it } from 'vitest';
import type { GatewayProcess } from '../fixtures/gateway-process.js';
import { liveFleetRun } from '../fixtures/live-fleet-run.js';
import type { GrowingUpstream } from '../../support/growing-upstream.js';
import {
  closeRun,
  exited,
  expectedFor,
  logLines,
  metricOf,
  portOf,
} from '../../support/live-fleet.js';
import type { RunningRedis } from '../fixtures/redis.js';
import { until } from '../../support/wait.js';

const POLL_MS = 300;

const run = liveFleetRun();

/** A copy of the fleet: polling `upstream`, its live bus on `redis`. */
const copy = (upstream: GrowingUpstream, redis: RunningRedis): Promise<GatewayProcess> =>
  run.copy(upstream, POLL_MS, { REDIS_URL: redis.url });

const wsUrl = (copy: GatewayProcess) => copy.endpoint.replace(/^http/, 'ws');

describe('two copies on one Redis', () => {
  it('kill -9 of the lock holder: the other copy takes over within 2 x LIVE_POLL_MS, nothing lost or repeated', async () => {
    const upstream = await run.upstream();
    const redis = await run.redis();
    const a = await copy(upstream, redis);
    const lb = await run.loopbackSwitch(portOf(a));
    const stream = run.arrivals(upstream, 150);
    // A's subscriber comes first: A takes the lock and polls.
    const onA = run.overSse('graphql-sse on A', `http://127.0.0.1:${lb.port}/graphql`);
    await until(() => onA.ids.length >= 2, 10_000);
    const b = await copy(upstream, redis);
    const sseOnB = run.overSse('graphql-sse on B', b.endpoint);
    const wsOnB = run.overWs('graphql-ws on B', wsUrl(b));
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
    const upstream = await run.upstream();
    const redis = await run.redis();
    const [a, b] = await Promise.all([copy(upstream, redis), copy(upstream, redis)]);
    const stream = run.arrivals(upstream, 150);
    const everyone = [
      run.overSse('graphql-sse on A', a.endpoint),
      run.overWs('graphql-ws on A', wsUrl(a)),
      run.overSse('graphql-sse on B', b.endpoint),
      run.overWs('graphql-ws on B', wsUrl(b)),
    ];
    await until(() => everyone.every((s) => s.ids.length >= 2), 10_000);

    await redis.close();
    const outageFrom = stream.ids.length;
    // Messages arrive while Redis is down.
    await until(() => stream.ids.length >= outageFrom + 6, 5_000);
    await run.redis({ port: redis.port }); // the same port: the copies reconnect to it
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
    for (const gateway of [a, b]) {
      expect(logLines(gateway, 'live updates: Redis unavailable')).toHaveLength(1);
      expect(logLines(gateway, 'live updates: Redis reachable again')).toHaveLength(1);
    }
  });
});
