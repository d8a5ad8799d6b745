/**
 * The doorbell: signed URLs that cannot be guessed, and what a ring does to the poll loop of its
 * number (one poll at once, at most one per ring gap, regular polls slowed to the safety net until
 * a message comes unannounced). The HTTP route: test/http/doorbell-route.test.ts; across two
 * copies: test/live/redis-bus.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { LocalBus } from '../../src/live/bus.js';
import { Doorbell, Throttle } from '../../src/live/doorbell.js';
import { liveStacks, polls, type LiveStack } from '../fixtures/live-stack.js';
import type { SseStream } from '../fixtures/sse.js';
import { sleep, until } from '../../support/wait.js';
import { ticksOf, type BusTicks } from './barriers.js';

const KEY = 'doorbell-test-key-0123456789abcdef0123456789';
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id } }';

const doorbell = (options: Partial<ConstructorParameters<typeof Doorbell>[0]> = {}) =>
  new Doorbell({
    bus: new LocalBus(),
    key: KEY,
    pathPrefix: '/hooks/ring',
    safetyNetMs: 60_000,
    ...options,
  });

/** The subscription's first read and its loop's first look (one shared call, or two) are done. */
async function firstLook(s: LiveStack, ticks: BusTicks): Promise<void> {
  await until(() => s.upstream.callsOf('smshistory') >= 1 && ticks.ended() >= 1);
}

const idsOf = (stream: SseStream) =>
  stream.events.map((e) => (e.data?.messageAdded as { id: string }).id);

describe('doorbell URLs', () => {
  it("signs each number's path: a signature is the number's alone, under the gateway's keys", () => {
    const bell = doorbell();
    const path = bell.pathOf('T-A');
    expect(path).toMatch(/^\/hooks\/ring\/T-A\/[A-Za-z0-9_-]{22}$/);
    const signature = path.split('/').at(-1)!;
    expect(bell.verify('T-A', signature)).toBe(true);
    expect(bell.verify('T-B', signature)).toBe(false);
    expect(
      bell.verify('T-A', `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`),
    ).toBe(false);
    expect(bell.verify('T-A', '')).toBe(false);
    // Another gateway's secret signs otherwise; a rotation keeps the old URLs ringing.
    expect(doorbell({ key: `${KEY}-other` }).verify('T-A', signature)).toBe(false);
    expect(doorbell({ key: `${KEY}-new`, previousKey: KEY }).verify('T-A', signature)).toBe(true);
  });

  it('is relative until the public address is known, then absolute (GATEWAY_PUBLIC_URL kept first)', () => {
    const bell = doorbell();
    expect(bell.urlOf('T 1')).toBe(bell.pathOf('T 1'));
    expect(bell.pathOf('T 1')).toContain('/T%201/');
    bell.listeningAt('http://127.0.0.1:4000/');
    expect(bell.urlOf('T-A')).toBe(`http://127.0.0.1:4000${bell.pathOf('T-A')}`);
    const configured = doorbell({ publicUrl: new URL('https://sms.example.com/gateway/') });
    configured.listeningAt('http://127.0.0.1:4000');
    expect(configured.urlOf('T-A')).toBe(`https://sms.example.com/gateway${bell.pathOf('T-A')}`);
  });

  it("recognises a webhook set to the number's doorbell URL, wherever the gateway is reached", () => {
    const bell = doorbell();
    expect(bell.wired('T-A', `https://gw.example.com/sms${bell.pathOf('T-A')}`)).toBe(true);
    expect(bell.wired('T-B', `https://gw.example.com${bell.pathOf('T-A')}`)).toBe(false);
    expect(bell.wired('T-A', 'https://hooks.example.com/sms/T-A')).toBe(false);
    expect(bell.wired('T-A', 'not a url')).toBe(false);
    expect(bell.wired('T-A', null)).toBe(false);
  });
});

describe('the ring throttle', () => {
  it('runs at once, folds the rest of the gap into one run at its end, and stays bounded', () => {
    // Fake clocks: the gap is the throttle's own, whatever else keeps the machine busy.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const throttle = new Throttle(100, 3);
      const runs: string[] = [];
      for (let i = 0; i < 10; i += 1) throttle.run('a', () => runs.push('a'));
      expect(runs).toEqual(['a']);
      vi.advanceTimersByTime(100);
      expect(runs).toEqual(['a', 'a']);
      // Every timer left is run: none is, the gap's nine calls were that one run.
      vi.runAllTimers();
      expect(runs).toEqual(['a', 'a']);
      for (const key of ['b', 'c', 'd', 'e', 'f']) throttle.run(key, () => runs.push(key));
      expect(throttle.size).toBeLessThanOrEqual(3);
      throttle.clear();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a ring and the poll loop of its number', () => {
  const stacks = liveStacks();

  /** A stack on a bus of the test's own (`bus`), its subscription on T-A past its first look. */
  async function watching(live: { pollMs: number; ringGapMs: number; safetyNetMs?: number }) {
    const bus = new LocalBus();
    const ticks = ticksOf(bus);
    const s = await stacks.start({ 'AC-1': ['T-A'] }, { live: { ...live, bus } });
    const stream = await s.open(ON_A, ONE);
    await firstLook(s, ticks);
    return { s, bus, ticks, stream };
  }

  it('polls once at once, and delivers well within LIVE_POLL_MS', async () => {
    // No regular poll is due within the test: a delivery proves the ring caused it.
    const { s, ticks, stream } = await watching({ pollMs: 60_000, ringGapMs: 50 });
    const before = s.upstream.callsOf('smshistory');
    const ticked = ticks.ended();
    const ids = s.upstream.add('T-A', 1);
    s.hub.doorbell!.ring('T-A');
    // Well within LIVE_POLL_MS (60 s), with room for a loaded machine.
    await stream.waitFor(1, 5_000);
    await until(() => ticks.ended() > ticked);
    // The ring's tick is over, but no later event marks that no second poll follows it: four ring
    // gaps pass, in which one left pending would have come.
    await sleep(200);
    expect(s.upstream.callsOf('smshistory') - before).toBe(1);
    expect(idsOf(stream)).toEqual(ids);
  });

  /**
   * Twenty messages, each announced (`ring`), 10 ms apart: one poll per ring gap at the most
   * (counted from the first ring), and every message delivered in order.
   */
  async function burst(s: LiveStack, stream: SseStream, gap: number, ring: () => Promise<void>) {
    const before = s.upstream.callsOf('smshistory');
    const started = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      ids.push(...s.upstream.add('T-A', 1));
      await ring();
      await sleep(10);
    }
    await stream.waitFor(20, 3_000);
    // Polls still due after the last delivery count too: the bound grows with the time waited.
    await sleep(gap * 2);
    const made = s.upstream.callsOf('smshistory') - before;
    expect(made).toBeGreaterThanOrEqual(1);
    expect(made).toBeLessThanOrEqual(Math.ceil((performance.now() - started) / gap) + 1);
    expect(made).toBeLessThan(20);
    expect(idsOf(stream)).toEqual(ids);
  }

  it('answers a burst of rings with one poll per ring gap, missing no message', async () => {
    const gap = 300;
    const { s, stream } = await watching({ pollMs: 10_000, ringGapMs: gap });
    await burst(s, stream, gap, async () => s.hub.doorbell!.ring('T-A'));
  });

  it('polls once per ring gap however many copies publish rings (straight on the bus)', async () => {
    const gap = 300;
    const { s, bus, stream } = await watching({ pollMs: 10_000, ringGapMs: gap });
    // Each copy's throttle lets a ring through: the poll loop keeps the gap itself.
    await burst(s, stream, gap, () => bus.publishRing('T-A'));
  });

  it('slows regular polls to the safety net once rung, and returns to LIVE_POLL_MS when a message comes unannounced', async () => {
    const pollMs = 100;
    const safetyNetMs = 1_500;
    const { s, stream } = await watching({ pollMs, safetyNetMs, ringGapMs: 20 });
    await polls(s, 2);
    /**
     * How long three more polls take: 300 ms every LIVE_POLL_MS, 2.9 s or more at the safety net's
     * pace. Held to under the safety net, five times the pace: slack for a loaded machine.
     */
    const threePolls = async () => {
      const started = performance.now();
      await polls(s, 3);
      return performance.now() - started;
    };
    // Not rung: every LIVE_POLL_MS.
    expect(await threePolls()).toBeLessThan(safetyNetMs);

    const calls = s.upstream.callsOf('smshistory');
    s.hub.doorbell!.ring('T-A');
    await until(() => s.upstream.callsOf('smshistory') > calls); // the ring's poll
    // Rung: no regular poll before the safety net is out. Five LIVE_POLL_MS without one; the
    // safety net is 1.45 s after the ring's poll, so a late timer on a loaded machine still ends
    // the wait well before it.
    const from = s.upstream.callsOf('smshistory');
    await sleep(5 * pollMs);
    expect(s.upstream.callsOf('smshistory') - from).toBe(0);

    // The service stops ringing: a message arrives unannounced. The safety net finds it...
    const ids = s.upstream.add('T-A', 1);
    // (its timeout is slack for a loaded machine: the safety net alone is due within 1.5 s)
    await stream.waitFor(1, safetyNetMs + 3_000);
    expect(idsOf(stream)).toEqual(ids);
    // ...and polls are back to every LIVE_POLL_MS.
    expect(await threePolls()).toBeLessThan(safetyNetMs);
  });

  it('keeps what it knows per number bounded by the numbers watched', async () => {
    const s = await stacks.start({ 'AC-1': ['T-A', 'T-B'] }, { live: { pollMs: 1_000 } });
    const stream = await s.open('subscription { messageAdded { id } }', ONE);
    await until(() => s.hub.doorbell!.stats.watched === 2);
    stream.close();
    await until(() => s.hub.stats.topics === 0);
    expect(s.hub.doorbell!.stats.watched).toBe(0);
  });
});
