/**
 * A drain with live streams open through the balancer, as in a fleet: two built copies
 * (dist/main.js) on one Redis behind Debian's haproxy (the recipe, docs/recipes/haproxy.cfg),
 * graphql-sse clients streaming through it, messages arriving every 150 ms. SIGTERM to the copy
 * that polls: it ends its streams and closes their connections, so it exits as soon as its work
 * is done, not at SHUTDOWN_TIMEOUT_MS (haproxy keeps a server connection open after a response,
 * and an ended stream's connection used to wait for the deadline). It hands its poll lock back:
 * the other copy starts polling without a takeover. The clients reconnect through haproxy to
 * the other copy and resume: every message once, in order.
 */
import { describe, expect, it } from 'vitest';
import type { GatewayProcess } from '../fixtures/gateway-process.js';
import { startHaproxy } from '../fixtures/haproxy.js';
import { expectResumedAfterSigterm, liveFleetRun } from '../fixtures/live-fleet-run.js';
import { exited, logLines, metricOf, type Recorder } from '../../support/live-fleet.js';
import { until } from '../../support/wait.js';

/** A lock lasts 1.5 intervals: long enough that a busy machine's late timers do not lose it. */
const POLL_MS = 1_000;
const READINESS_DELAY_MS = 1_500;
/** Far above what the drain needs: a drain that waits for it fails the test. */
const SHUTDOWN_TIMEOUT_MS = 20_000;
const SUBSCRIBERS = 6;

const run = liveFleetRun();

describe('draining a copy with SSE streams open through haproxy', () => {
  it('ends the streams, closes their connections and exits long before the timeout; clients resume on the other copy, nothing lost', async () => {
    const upstream = await run.upstream();
    const redis = await run.redis();
    const env = {
      REDIS_URL: redis.url,
      SHUTDOWN_READINESS_DELAY_MS: String(READINESS_DELAY_MS),
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    };
    const copies = await Promise.all([
      run.copy(upstream, POLL_MS, env),
      run.copy(upstream, POLL_MS, env),
    ]);
    const hostPort = (copy: GatewayProcess): string => new URL(copy.endpoint).host;
    const balancer = await startHaproxy({ backends: copies.map(hostPort) });
    run.afterwards(() => balancer.close());

    const stream = run.arrivals(upstream, 150);
    const everyone: Recorder[] = [];
    for (let i = 0; i < SUBSCRIBERS; i += 1) {
      everyone.push(run.overSse(`graphql-sse ${i}`, `${balancer.url}/graphql`));
    }
    await until(() => everyone.every((s) => s.ids.length >= 3), 15_000);
    // haproxy spreads the streams over both copies; the one polling (holding the lock) drains.
    const locks = await Promise.all(copies.map((c) => metricOf(c, 'sms_live_poll_locks_held')));
    const leaving = copies[locks.indexOf(1)]!;
    const staying = copies[1 - locks.indexOf(1)]!;
    expect(locks.sort()).toEqual([0, 1]);
    expect(await metricOf(leaving, 'sms_live_subscriptions')).toBeGreaterThan(0);

    const takeoversBefore = await metricOf(staying, 'sms_live_takeovers_total');
    const beforeSigterm = stream.ids.length;
    const sigtermTime = Date.now();
    const sigtermAt = performance.now();
    leaving.child.kill('SIGTERM');
    const code = await exited(leaving);
    const drainMs = performance.now() - sigtermAt;
    expect(code, leaving.stderr()).toBe(0);
    // The readiness delay, then the streams' end and their connections' close: not the timeout.
    expect(drainMs).toBeLessThan(READINESS_DELAY_MS + 3_000);

    await expectResumedAfterSigterm(stream, everyone, beforeSigterm);

    // The lock was handed over, not taken over: the draining copy says so, the other one polls
    // now without logging or counting a takeover.
    const tookOver = logLines(staying, 'took over polling');
    expect(tookOver.filter((line) => Date.parse(line.time) >= sigtermTime)).toEqual([]);
    expect(await metricOf(staying, 'sms_live_takeovers_total')).toBe(takeoversBefore);
    expect(logLines(leaving, 'handed over polling')).toHaveLength(1);
    expect(await metricOf(staying, 'sms_live_poll_locks_held')).toBe(1);
  }, 90_000);
});
