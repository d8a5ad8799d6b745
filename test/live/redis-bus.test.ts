/**
 * Live updates across two gateway copies on one real redis-server: one copy polls a topic, the
 * other receives its events through pub/sub, and the other takes over when the polling one goes
 * away, continuing from the seen state in Redis (no message lost, none sent twice).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Claim } from '../../src/live/bus.js';
import { RedisBus } from '../../src/live/redis-bus.js';
import type { Logger } from '../../src/observability/logger.js';
import { connectRedis } from '../../src/redis/connection.js';
import type { SealSecret } from '../../src/redis/seal.js';
import { captureLogs } from '../fixtures/captured-logs.js';
import { liveStacks } from '../fixtures/live-stack.js';
import type { GrowingUpstream } from '../../support/growing-upstream.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';
import type { SseStream } from '../fixtures/sse.js';
import { sleep, until, untilAsync } from '../../support/wait.js';
import { POLL_PAGE, firstReads } from '../fixtures/live-reads.js';
import { pollsOf, ticksOf, type BusTicks } from './barriers.js';

const POLL_MS = 60;
const LOCK_TTL_MS = 400;
const HMAC_KEY = 'live-test-key-0123456789abcdef0123456789';
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id } }';

let redis: RunningRedis;
const stacks = liveStacks();

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.close();
});

/** A connection as src/start.ts opens it for live updates. */
const liveConnection = () => connectRedis(new URL(redis.url), 'live', { logger: false });

/** A gateway copy over `upstream` whose live bus is on the one Redis, sealing with `secret`. */
function copy(
  upstream: GrowingUpstream,
  lockTtlMs = LOCK_TTL_MS,
  secret: SealSecret = { current: HMAC_KEY },
  logger: Logger | false = false,
) {
  const bus = new RedisBus({ connection: liveConnection(), lockTtlMs, secret, logger });
  const ticks = ticksOf(bus);
  const stack = stacks.gatewayOver(upstream, {
    live: { pollMs: POLL_MS, bus, hmacKey: HMAC_KEY, pageSize: POLL_PAGE },
  });
  return { test: stack.test, bus, ticks, open: () => stack.open(ON_A, ONE) };
}

/**
 * Resolves once `copies` listen (their loops have claimed) and `subscriptions` in all have read
 * their head: a message added after that is new to each of them.
 */
async function listening(
  upstream: GrowingUpstream,
  copies: readonly { ticks: BusTicks }[],
  subscriptions: number,
) {
  await firstReads(upstream, subscriptions);
  await until(() => copies.every((c) => c.ticks.claimed() >= 1));
}

const idsOf = (stream: SseStream) =>
  stream.events.map((e) => (e.data?.messageAdded as { id: string } | undefined)?.id);

describe('live updates across two copies on one Redis', () => {
  it('one copy polls, both copies deliver each new message once', async () => {
    const upstream = await stacks.upstream({ 'AC-1': ['T-A'] });
    const a = copy(upstream);
    const b = copy(upstream);
    const onA = await a.open();
    const onB = await b.open();
    await until(() => upstream.callsOf('smshistory') >= 2);

    const before = pollsOf(upstream);
    const started = performance.now();
    // Eight polls, however long a loaded machine takes for them: two pollers would make them in
    // four intervals, over the bound.
    await until(() => pollsOf(upstream) - before >= 8, 15_000);
    const made = pollsOf(upstream) - before;
    // One poller between them: about one poll per interval, not two.
    expect(made).toBeLessThanOrEqual(Math.ceil((performance.now() - started) / POLL_MS) + 1);

    const ids = upstream.add('T-A', 3);
    await onA.waitFor(3);
    await onB.waitFor(3);
    // A later message is the barrier: a repeat of the first three comes before it, or with it.
    const later = upstream.add('T-A', 1);
    await onA.waitFor(4);
    await onB.waitFor(4);
    expect(idsOf(onA)).toEqual([...ids, ...later]);
    expect(idsOf(onB)).toEqual([...ids, ...later]);
  });

  it('keys and channels are HMACs: no credential reaches Redis', async () => {
    const upstream = await stacks.upstream({ 'AC-1': ['T-A'] });
    const a = copy(upstream);
    await a.open();
    await until(() => upstream.callsOf('smshistory') >= 2);
    const inspect = new Redis(redis.url);
    try {
      const keys = await inspect.keys('*');
      const channels = (await inspect.pubsub('CHANNELS', '*')) as string[];
      expect(keys.some((k) => k.startsWith('sms-gateway:live:v1:lock:'))).toBe(true);
      expect(channels.some((c) => c.startsWith('sms-gateway:live:v1:events:'))).toBe(true);
      const values = await Promise.all(keys.map((k) => inspect.get(k)));
      const everything = [...keys, ...channels, ...values].join('\n');
      expect(everything).not.toContain('AC-1');
      expect(everything).not.toContain('tok-AC-1');
      expect(everything).not.toContain('T-A');
    } finally {
      inspect.disconnect();
    }
  });

  it('opens events sealed with the previous secret; ignores, and logs once, any other', async () => {
    const [before, after] = [`${HMAC_KEY}-before`, `${HMAC_KEY}-after`];
    const upstream = await stacks.upstream({ 'AC-1': ['T-A'] });
    // A polls (it subscribed first) and seals with the secret before the rotation.
    const a = copy(upstream, LOCK_TTL_MS, { current: before });
    const onA = await a.open();
    await until(() => a.test.live!.stats.locksHeld === 1);
    const rotated = copy(upstream, LOCK_TTL_MS, { current: after, previous: before });
    const logs = captureLogs('warn');
    const stranger = copy(upstream, LOCK_TTL_MS, { current: `${HMAC_KEY}-other` }, logs.logger);
    const onRotated = await rotated.open();
    const onStranger = await stranger.open();
    await listening(upstream, [rotated, stranger], 3);
    const ids = upstream.add('T-A', 2);
    await onA.waitFor(2);
    await onRotated.waitFor(2);
    // The stranger has heard the same publication once it logs.
    await until(() => logs.lines.length >= 1);
    expect(idsOf(onRotated)).toEqual(ids);
    expect(onStranger.events).toEqual([]);
    expect(logs.lines.map((line) => line.msg)).toEqual([
      'live updates: ignored a value sealed under another secret, or altered',
    ]);
  });

  it("reads the previous release's clear events and seen state while both run (docs/upgrading.md)", async () => {
    const bus = new RedisBus({
      connection: liveConnection(),
      lockTtlMs: LOCK_TTL_MS,
      secret: { current: HMAC_KEY },
      logger: false,
    });
    const admin = new Redis(redis.url);
    try {
      // As 0.1.0 wrote them: JSON in clear, under the same keys and channels.
      const seen = { total: 455, newestIds: ['58a809f16dde3c7b2e023a56c86bd8e6'] };
      await admin.set('sms-gateway:live:v1:seen:T-old', JSON.stringify(seen));
      expect(await bus.loadSeen('T-old')).toEqual(seen);
      const heard: unknown[] = [];
      await bus.listen('T-old', (event) => heard.push(event));
      const message = { id: 'm-1', body: 'hello', sentAt: '2026-12-07T10:00:00.000Z' };
      await admin.publish(
        'sms-gateway:live:v1:events:T-old',
        JSON.stringify([{ kind: 'message', seq: 456, total: 456, message }]),
      );
      await until(() => heard.length === 1);
      expect(heard[0]).toMatchObject({ kind: 'message', message: { id: 'm-1', body: 'hello' } });
    } finally {
      admin.disconnect();
      await bus.close();
    }
  });

  it('another copy takes over when the polling one goes away, losing and repeating nothing', async () => {
    const upstream = await stacks.upstream({ 'AC-1': ['T-A'] });
    const a = copy(upstream);
    const onA = await a.open();
    await until(() => upstream.callsOf('smshistory') >= 1);
    const b = copy(upstream);
    const onB = await b.open();
    // B's subscription starts at the head it reads: what arrives before that is not new to it.
    await listening(upstream, [b], 2);
    const first = upstream.add('T-A', 1);
    await onB.waitFor(1);
    await onA.waitFor(1);
    expect(idsOf(onB)).toEqual(first);
    expect(idsOf(onA)).toEqual(first);

    // Copy A vanishes without a word: its Redis connection drops, its lock is not released.
    await a.bus.close();
    const gap = upstream.add('T-A', 2);
    await onB.waitFor(3, LOCK_TTL_MS + POLL_MS * 20);
    const later = upstream.add('T-A', 1);
    await onB.waitFor(4);
    // A repeat of what A had sent comes before `later` (or with it): the four are the proof.
    expect(idsOf(onB)).toEqual([...first, ...gap, ...later]);
  });

  it('when the polling copy’s last subscriber leaves, the other copy polls at once', async () => {
    const upstream = await stacks.upstream({ 'AC-1': ['T-A'] });
    // A lock that would take 20 s to lapse: B polling well before that means A released it.
    const lockTtlMs = 20_000;
    const a = copy(upstream, lockTtlMs);
    const onA = await a.open();
    await until(() => a.test.live!.stats.locksHeld === 1);
    const b = copy(upstream, lockTtlMs);
    const onB = await b.open();
    // Two of B's ticks have asked for the lock, and been told no.
    await until(() => b.ticks.claimed() >= 2);
    expect(b.test.live!.stats.locksHeld).toBe(0);
    onA.close();
    await until(() => a.test.live!.stats.topics === 0);
    const ids = upstream.add('T-A', 2);
    // Released, not expired: B claims on its next tick, long before the lock's TTL.
    await onB.waitFor(2, lockTtlMs / 4);
    expect(b.test.live!.stats.locksHeld).toBe(1);
    expect(idsOf(onB)).toEqual(ids);
  });
});

describe('the doorbell across two copies on one Redis', () => {
  it('a ring on the copy that does not poll makes one poll across both, delivered by both', async () => {
    // No regular poll is due within the test: a delivery proves the ring caused it.
    const pollMs = 60_000;
    const upstream = await stacks.upstream({ 'AC-1': ['T-A'] });
    const doorbelled = async () => {
      const connection = liveConnection();
      // Until it is connected a claim fails, and the next comes a quarter of LIVE_POLL_MS later.
      await until(() => connection.client.status === 'ready');
      const bus = new RedisBus({
        connection,
        lockTtlMs: 1.5 * pollMs,
        secret: { current: HMAC_KEY },
        logger: false,
      });
      const ticks = ticksOf(bus);
      const stack = stacks.gatewayOver(upstream, {
        live: { pollMs, bus, hmacKey: HMAC_KEY, ringGapMs: 50, pageSize: POLL_PAGE },
      });
      return { ...stack, ticks };
    };
    const a = await doorbelled();
    const onA = await a.open(ON_A, ONE);
    await until(() => a.ticks.ended() >= 1);
    const b = await doorbelled();
    const onB = await b.open(ON_A, ONE);
    // B's first tick has been told no (its next is a quarter of LIVE_POLL_MS away).
    await listening(upstream, [b], 2);
    expect(b.hub.stats.locksHeld).toBe(0);

    const before = upstream.callsOf('smshistory');
    const ticked = a.ticks.ended();
    const ids = upstream.add('T-A', 1);
    b.hub.doorbell!.ring('T-A');
    // Well within LIVE_POLL_MS (60 s), with room for a loaded machine.
    await onA.waitFor(1, 5_000);
    await onB.waitFor(1, 5_000);
    await until(() => a.ticks.ended() > ticked);
    // A's tick is over, but no later event marks that no second poll follows it: six ring gaps
    // pass, in which one left pending would have come.
    await sleep(300);
    expect(upstream.callsOf('smshistory') - before).toBe(1);
    expect(idsOf(onA)).toEqual(ids);
    expect(idsOf(onB)).toEqual(ids);
  });
});

describe('a lock handed back (RedisBus.release)', () => {
  it('marks the seen state released before the lock goes: a copy claiming in between never reads a takeover', async () => {
    const bus = () =>
      new RedisBus({
        connection: liveConnection(),
        lockTtlMs: 20_000,
        secret: { current: HMAC_KEY },
      });
    const [leaving, staying] = [bus(), bus()];
    /** The bus's claim once it is connected (commands fail at once until then). */
    const claimed = async (copy: RedisBus) => {
      let claim: Claim | null = null;
      await untilAsync(
        async () => (claim = await copy.claim('handed-back').catch(() => null)) !== null,
      );
      return claim;
    };
    // monitor() opens a connection of its own: the client it came from is closed too, or it
    // retries the stopped redis-server for the rest of the run, logging into other files' tests.
    const client = new Redis(redis.url);
    const monitor = await client.monitor();
    // What the server runs on the two keys, in the order it runs it: writes of the seen state,
    // and the lock's deletion (the one script that deletes).
    const steps: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      const [command, script] = [args[0]?.toLowerCase(), args[1] ?? ''];
      if (command === 'set' && args[1]?.endsWith('seen:handed-back')) steps.push('seen written');
      if (command === 'eval' && script.includes("'del'")) steps.push('lock deleted');
    });
    try {
      expect(await claimed(leaving)).toBe('acquired');
      await leaving.saveSeen('handed-back', { total: 3, newestIds: ['m-3'] });
      await leaving.release('handed-back');
      // The poll's own write, the mark, then the lock: never the lock before the mark.
      await until(() => steps.length >= 3);
      expect(steps).toEqual(['seen written', 'seen written', 'lock deleted']);
      // The next copy starts from the seen state as after a handover.
      expect(await claimed(staying)).toBe('acquired');
      expect(await staying.loadSeen('handed-back')).toEqual({ total: 3, newestIds: ['m-3'] });
    } finally {
      monitor.disconnect();
      client.disconnect();
      await Promise.all([leaving.close(), staying.close()]);
    }
  });
});
