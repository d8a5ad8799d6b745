/**
 * Live updates over GraphQL over SSE, against a real loopback upstream whose histories grow on
 * command: delivery, shared polling (counted upstream calls), stopping, isolation and limits (what
 * one poll loop does: test/live/poll-loop.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { liveStacks, polls, type LiveStack } from '../fixtures/live-stack.js';
import { createMetrics, type GatewayMetrics } from '../../src/observability/metrics.js';
import { sleep, until } from '../../support/wait.js';
import { LocalBus } from '../../src/live/bus.js';
import { POLL_PAGE } from '../fixtures/live-reads.js';
import { pollsOf, ticksOf } from './barriers.js';

const POLL_MS = 50;
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const TWO = { 'x-sys-id': 'AC-2', 'x-auth-token': 'tok-AC-2' };
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id tid body } }';
const ACCOUNTS = { 'AC-1': ['T-A', 'T-B'], 'AC-2': ['T-C'] };

const stacks = liveStacks();

function stack(
  live: { maxPerAccount?: number; failuresBeforeError?: number; pageSize?: number } = {},
  metrics?: GatewayMetrics,
): Promise<LiveStack> {
  return stacks.start(ACCOUNTS, {
    live: { pollMs: POLL_MS, ...live },
    ...(metrics ? { metrics } : {}),
  });
}

describe('Subscription.messageAdded over SSE', () => {
  it('delivers new messages once each, oldest first, and nothing that was there before', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, ONE);
    await polls(s, 2); // the subscription reads the head, then the first poll learns it
    const ids = s.upstream.add('T-A', 2);
    await stream.waitFor(2);
    await polls(s, 2);
    s.upstream.add('T-A', 1);
    await stream.waitFor(3);
    await polls(s, 2);
    expect(stream.events.map((e) => (e.data?.messageAdded as { id: string }).id)).toEqual([
      ...ids,
      expect.any(String),
    ]);
    expect(stream.events.every((e) => e.errors === undefined)).toBe(true);
    expect(stream.events).toHaveLength(3);
  });

  it("delivers what arrives between the subscription's first read and its poll loop's first look", async () => {
    // The loop reads 10 at a time, the subscription's own first read 20: the two are told apart.
    const s = await stack({ pageSize: 10 });
    let release = (): void => {};
    const loopMayLook = new Promise<void>((resolve) => (release = resolve));
    s.upstream.holdHistory((call) =>
      call.params.get('history_end') === '10' ? loopMayLook : null,
    );
    const stream = await s.open(ON_A, ONE);
    const subscriptionRead = () =>
      s.upstream.calls.some((c) => c.params.get('history_end') === '20');
    await until(subscriptionRead, 15_000);
    const ids = s.upstream.add('T-A', 2);
    s.upstream.holdHistory(null);
    release();
    // No later arrival: the loop's first look is all there is to learn of these two from.
    await stream.waitFor(2);
    expect(stream.events.map((e) => (e.data?.messageAdded as { id: string }).id)).toEqual(ids);
  });

  it('watches every number of the account when tids is left out', async () => {
    const s = await stack();
    const stream = await s.open('subscription { messageAdded { tid } }', ONE);
    await polls(s, 4); // each number's head, read by the subscription, then a poll of each
    s.upstream.add('T-B', 1);
    s.upstream.add('T-A', 1);
    await stream.waitFor(2);
    expect(stream.events.map((e) => (e.data?.messageAdded as { tid: string }).tid).sort()).toEqual([
      'T-A',
      'T-B',
    ]);
  });

  it('ten subscribers of one account and number share one poll loop, stopped after the last leaves', async () => {
    const bus = new LocalBus();
    const loops = ticksOf(bus);
    const s = await stacks.start(ACCOUNTS, { live: { pollMs: POLL_MS, pageSize: POLL_PAGE, bus } });
    const made = () => pollsOf(s.upstream);
    const subscribers = await Promise.all(Array.from({ length: 10 }, () => s.open(ON_A, ONE)));
    await polls(s, 1);
    expect(s.hub.stats).toMatchObject({ topics: 1, subscriptions: 10 });
    const before = made();
    const started = performance.now();
    // Six polls, however long a loaded machine takes for them: one per subscriber would make
    // them in one interval, over the bound.
    await until(() => made() - before >= 6, 15_000);
    // One loop: about one poll per interval, never one per subscriber.
    expect(made() - before).toBeLessThanOrEqual(
      Math.ceil((performance.now() - started) / POLL_MS) + 1,
    );

    s.upstream.add('T-A', 1);
    await Promise.all(subscribers.map((stream) => stream.waitFor(1)));

    for (const stream of subscribers) stream.close();
    await until(() => s.hub.stats.topics === 0);
    expect(s.hub.stats).toMatchObject({ topics: 0, subscriptions: 0 });
    // Its loop is over, a tick under way included: a poll from here on is one too many.
    await until(() => loops.stopped() === 1);
    const after = s.upstream.callsOf('smshistory');
    // Time passing is the claim: four poll intervals bring no poll.
    await sleep(POLL_MS * 4);
    expect(s.upstream.callsOf('smshistory')).toBe(after);
  });

  it('reports subscriptions and watched numbers as metrics', async () => {
    const metrics = createMetrics();
    const s = await stack({}, metrics);
    await s.open(ON_A, ONE);
    await s.open(ON_A, ONE);
    await s.open('subscription { messageAdded { id } }', ONE);
    await polls(s, 3);
    const text = await metrics.registry.metrics();
    expect(text).toContain('sms_live_subscriptions{kind="subscriptions"} 3');
    // T-A (shared by two) and T-B.
    expect(text).toContain('sms_live_subscriptions{kind="topics"} 2');
  });

  it('refuses a tid of another account with an error and no data, without polling it', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, TWO);
    await stream.waitFor(1);
    expect(stream.events[0]).toMatchObject({
      errors: [
        {
          message: 'messageAdded: this account has no number with tid "T-A"',
          extensions: { code: 'BAD_USER_INPUT' },
        },
      ],
    });
    expect(stream.events[0]?.data ?? null).toBeNull();
    expect(s.upstream.callsOf('smshistory')).toBe(0);
    expect(s.hub.stats.topics).toBe(0);
  });

  it('needs credentials: UNAUTHENTICATED without them, and no upstream call', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, {});
    await stream.waitFor(1);
    expect(stream.events[0]?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(s.upstream.calls).toHaveLength(0);
  });

  it('caps subscriptions per account with a clear error', async () => {
    const s = await stack({ maxPerAccount: 2 });
    await s.open(ON_A, ONE);
    await s.open(ON_A, ONE);
    await polls(s, 2);
    const third = await s.open(ON_A, ONE);
    await third.waitFor(1);
    expect(third.events[0]?.errors?.[0]).toMatchObject({
      message: 'This account already holds 2 live subscriptions, the most allowed; close one first',
      extensions: { code: 'SUBSCRIPTION_LIMIT' },
    });
    // Another account is not affected by the first one's cap.
    const other = await s.open('subscription { messageAdded { id } }', TWO);
    await polls(s, 1, 'AC-2');
    expect(other.events).toHaveLength(0);
  });

  it('answers LIVE_UPDATES_OFF when live updates are turned off', async () => {
    const s = await stacks.start({ 'AC-1': ['T-A'] });
    const stream = await s.open(ON_A, ONE);
    await stream.waitFor(1);
    expect(stream.events[0]?.errors?.[0]?.extensions?.code).toBe('LIVE_UPDATES_OFF');
    expect(s.upstream.callsOf('smshistory')).toBe(0);
  });

  it('shutdown ends every stream without `complete`, so clients reconnect', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, ONE);
    await polls(s, 2);
    await s.hub.close();
    await until(() => stream.done());
    expect(stream.completed()).toBe(false);
    expect(s.hub.stats).toMatchObject({ topics: 0, subscriptions: 0 });
  });
});
