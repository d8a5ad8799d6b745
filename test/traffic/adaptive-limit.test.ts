import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from '../../src/traffic/adaptive-limit.js';

/** Feeds `count` samples of `rttMs`, each with the limit fully used. */
function feed(limit: AdaptiveLimit, count: number, rttMs: number | ((inFlight: number) => number)) {
  for (let i = 0; i < count; i += 1) {
    const inFlight = limit.current;
    limit.sample(typeof rttMs === 'number' ? rttMs : rttMs(inFlight), inFlight);
  }
}

/** Feeds `count` samples of `rttMs` with only `inFlight` calls out: the service lightly loaded. */
function learn(
  limit: AdaptiveLimit,
  count: number,
  rttMs: number,
  inFlight = 4,
  operation?: string,
) {
  for (let i = 0; i < count; i += 1) limit.sample(rttMs, inFlight, false, operation);
}

describe('AdaptiveLimit', () => {
  it('grows while latency holds, up to its cap', () => {
    const limit = new AdaptiveLimit({ initial: 16, min: 4, max: 128 });
    feed(limit, 100, 20);
    const grown = limit.current;
    expect(grown).toBeGreaterThan(16);
    feed(limit, 5_000, 20);
    expect(limit.current).toBe(128);
  });

  it('does not grow when the limit is not used', () => {
    const limit = new AdaptiveLimit({ initial: 16, min: 4, max: 128 });
    for (let i = 0; i < 500; i += 1) limit.sample(20, 1);
    expect(limit.current).toBe(16);
  });

  it('settles where latency has doubled when the service slows with calls in flight', () => {
    // 10 ms when idle, +1 ms per call in flight: 2x the baseline is reached at 10 in flight.
    const limit = new AdaptiveLimit({ initial: 64, min: 2, max: 256, slackMs: 0 });
    learn(limit, 200, 10); // the baseline is learnt at light load
    feed(limit, 3_000, (inFlight) => 10 + inFlight);
    expect(limit.current).toBeLessThan(40);
    expect(limit.current).toBeGreaterThanOrEqual(4);
  });

  it('does not throttle a fast service over a few ms of extra latency (the slack)', () => {
    // 0.3 ms idle, 5 ms under load: "16x slower", yet no sign of overload worth idling for.
    const slack = new AdaptiveLimit({ initial: 32, min: 4, max: 128 });
    const none = new AdaptiveLimit({ initial: 32, min: 4, max: 128, slackMs: 0 });
    let lowestWithoutSlack = none.current;
    for (const limit of [slack, none]) {
      learn(limit, 100, 0.3);
      for (let i = 0; i < 2_000; i += 1) {
        limit.sample(5, limit.current);
        if (limit === none) lowestWithoutSlack = Math.min(lowestWithoutSlack, none.current);
      }
    }
    expect(slack.current).toBe(128);
    expect(lowestWithoutSlack).toBeLessThan(32);
    // Past the slack, it backs off as before: 10 ms idle, 40 ms under load.
    const slow = new AdaptiveLimit({ initial: 64, min: 4, max: 128 });
    learn(slow, 100, 10);
    let lowestSlow = slow.current;
    for (let i = 0; i < 200; i += 1) {
      slow.sample(40, slow.current);
      lowestSlow = Math.min(lowestSlow, slow.current);
    }
    expect(lowestSlow).toBeLessThan(100);
  });

  it('starts open: a first fan-out is not throttled while the limit learns', () => {
    expect(new AdaptiveLimit({ min: 4, max: 128 }).current).toBe(128);
  });

  it('is open again within a second when the normal latency rises with no more calls in flight', () => {
    // A busier hour: 32 callers, whose calls took 1 ms, now take 20 ms at the same concurrency.
    let now = 0;
    const limit = new AdaptiveLimit({ min: 4, max: 128, now: () => now });
    const call = (ms: number): void => {
      const inFlight = Math.min(32, limit.current);
      now += ms / inFlight; // 32 callers back to back
      limit.sample(ms, inFlight);
    };
    for (let i = 0; i < 100; i += 1) call(1);
    const risen = now;
    let lowest = limit.current;
    while (now - risen < 1_000) {
      call(20);
      lowest = Math.min(lowest, limit.current);
    }
    // Backing off did not make it faster: the latency is the service's normal one now, and no
    // caller is held back any more.
    expect(limit.baseline()).toBe(20);
    expect(limit.current).toBeGreaterThanOrEqual(32);
    expect(lowest).toBeLessThan(32);
    // And it still backs off if, from there, latency rises as its own concurrency grows.
    feed(limit, 2_000, (inFlight) => 20 + inFlight);
    expect(limit.current).toBeLessThan(64);
  });

  it('opens again when a fast service turns 20 ms whatever is in flight, its windows level', () => {
    // Bench fan-out@c1: smshistory learnt at 1 ms under heavy load, then 20-22 ms for a fan-out
    // that always waits. Compared only with the last window, it stuck near 6 in flight: noise made
    // some windows a little faster, and once settled each window was as full as the last.
    for (let seed = 1; seed <= 20; seed += 1) {
      let state = seed;
      const jitter = (): number => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
      let now = 0;
      const limit = new AdaptiveLimit({ min: 4, max: 128, now: () => now });
      for (let i = 0; i < 500; i += 1) limit.sample(1 + jitter() * 0.2, 128, true, 'smshistory');
      while (now < 1_000) {
        const inFlight = limit.current;
        const rttMs = 20 + jitter() * 2;
        now += rttMs / inFlight; // calls back to back
        limit.sample(rttMs, inFlight, true, 'smshistory');
      }
      expect(limit.current).toBeGreaterThanOrEqual(32);
      expect(limit.baseline('smshistory')).toBeGreaterThanOrEqual(20);
    }
  });

  it('judges each operation against its own baseline: a slower operation is not a slower service', () => {
    // Number lists in 1 ms from 32 connections, then a 200-number fan-out of 20 ms histories.
    const limit = new AdaptiveLimit({ min: 4, max: 128 });
    learn(limit, 500, 1, 32, 'allownednumbers');
    for (let i = 0; i < 2_000; i += 1) {
      limit.sample(20, limit.current, true, 'smshistory');
      limit.sample(1, limit.current, true, 'allownednumbers');
    }
    expect(limit.current).toBe(128);
    expect(limit.baseline('allownednumbers')).toBe(1);
    expect(limit.baseline('smshistory')).toBe(20);
  });

  it('opens up to the pool within three windows while latency stays flat', () => {
    const limit = new AdaptiveLimit({ initial: 32, min: 4, max: 128 });
    const seen: number[] = [];
    for (let window = 0; window < 3; window += 1) {
      feed(limit, Math.max(8, limit.current / 4), 20);
      seen.push(limit.current);
    }
    expect(seen).toEqual([64, 128, 128]);
  });

  it('counts a window as used when one account fills its half share, or calls wait', () => {
    const half = new AdaptiveLimit({ initial: 32, min: 4, max: 128 });
    for (let i = 0; i < 8; i += 1) half.sample(20, 16);
    expect(half.current).toBe(64);
    const queued = new AdaptiveLimit({ initial: 32, min: 4, max: 128 });
    for (let i = 0; i < 8; i += 1) queued.sample(20, 3, true);
    expect(queued.current).toBe(64);
    const idle = new AdaptiveLimit({ initial: 32, min: 4, max: 128 });
    for (let i = 0; i < 8; i += 1) idle.sample(20, 3);
    expect(idle.current).toBe(32);
  });

  it("does not read the gateway's own event-loop delay as the service slowing", () => {
    // A 20 ms service; under load each answer also waits 40-70 ms for this process's loop, which
    // the lag sampler saw as stalls of that length while the calls were out.
    let now = 0;
    let stallMs = 0;
    const withLag = new AdaptiveLimit({
      initial: 32,
      min: 4,
      max: 128,
      now: () => now,
      ownDelayMs: () => stallMs,
    });
    const blind = new AdaptiveLimit({ initial: 32, min: 4, max: 128, now: () => now });
    for (const limit of [withLag, blind]) {
      learn(limit, 100, 20);
      feed(limit, 100, 20);
    }
    let lowest = withLag.current;
    for (let i = 0; i < 1_000; i += 1) {
      now += 1;
      stallMs = 40 + (i % 4) * 10;
      for (const limit of [withLag, blind]) limit.sample(20 + stallMs, limit.current);
      lowest = Math.min(lowest, withLag.current);
    }
    expect(lowest).toBe(128);
    // The baseline is learnt from the calls as timed: the discount never drags it to zero, and
    // the stalls never become the service's normal latency, as they do for a limit blind to them.
    expect(withLag.baseline()).toBe(20);
    expect(blind.baseline()).toBeGreaterThanOrEqual(60);
  });

  it('recovers within a second of 20 ms calls after the load that shrank it', () => {
    let now = 0;
    const limit = new AdaptiveLimit({ initial: 128, min: 4, max: 128, now: () => now });
    feed(limit, 100, 20);
    // A burst of service-wide timeouts took it to the floor.
    for (let i = 0; i < 6; i += 1) limit.overloaded();
    expect(limit.current).toBe(4);
    // Then the service answers in 20 ms again, the limit in use: back to the pool in < 1 s.
    const started = now;
    while (limit.current < 128 && now - started < 5_000) {
      const inFlight = limit.current;
      now += 20 / Math.max(1, inFlight / 8); // one window of calls per round trip, at most
      limit.sample(20, inFlight);
    }
    expect(limit.current).toBe(128);
    expect(now - started).toBeLessThan(1_000);
  });

  it('still backs off when the service really slows with load, despite some own delay', () => {
    // 5 ms idle, +0.5 ms per call in flight (bench scenario f), with a steady 5 ms of own lag.
    const limit = new AdaptiveLimit({
      initial: 128,
      min: 4,
      max: 128,
      ownDelayMs: () => 5,
    });
    learn(limit, 8, 5.5); // learnt lightly loaded
    feed(limit, 3_000, (inFlight) => 5 + 5 + 0.5 * inFlight);
    // allowed = 2 x 5.5 + 10 = 21 ms of service time: about 32 in flight.
    expect(limit.current).toBeLessThan(64);
    expect(limit.current).toBeGreaterThanOrEqual(4);
  });

  it('halves at once when the service pushes back, never below its floor', () => {
    const limit = new AdaptiveLimit({ initial: 40, min: 8, max: 128 });
    limit.overloaded();
    expect(limit.current).toBe(20);
    limit.overloaded();
    limit.overloaded();
    expect(limit.current).toBe(8);
  });
});
