/**
 * One live subscriber (src/live/subscription.ts), driven as the hub drives it: events pushed by
 * hand, its history read from a real loopback upstream whose histories grow on command. Order,
 * duplicates, gaps, fresh starts, resume points and their bound, the bounded queue, and ending.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isUnreadable } from '../../src/core/domain.js';
import type { UpstreamClient } from '../../src/core/upstream-client.js';
import type { LiveEvent } from '../../src/live/bus.js';
import {
  LiveSubscription,
  type Delivery,
  type Positions,
  type SubscriptionOptions,
} from '../../src/live/subscription.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import { until } from '../../support/wait.js';
import { directUpstreamClient, type DirectClient } from '../fixtures/upstream-client.js';

const TARGET = { tid: 'T-A', number: '15550000001' };
const OTHER = { tid: 'T-B', number: '15550000002' };
/** The subscriber's credentials; the test reads the same history as AC-POLL, counted apart. */
const SUBSCRIBER = { sysId: 'AC-1', authToken: 'tok-AC-1' };
const POLLER = { sysId: 'AC-POLL', authToken: 'tok-AC-POLL' };

type Message = Extract<LiveEvent, { kind: 'message' }>;

let upstream: GrowingUpstream;
let direct: DirectClient;
let subscriptions: LiveSubscription[] = [];
let ends = 0;

beforeEach(async () => {
  // Each starts with 6 messages, seqs 0 to 5: the upstream adds 3 for each account owning it.
  upstream = await startGrowingUpstream({ 'AC-1': ['T-A', 'T-B'], 'AC-POLL': ['T-A', 'T-B'] });
  direct = directUpstreamClient(upstream.url);
  ends = 0;
});

afterEach(async () => {
  for (const subscription of subscriptions) await subscription.return();
  subscriptions = [];
  await direct.close();
  await upstream.close();
});

function subscribe(options: Partial<SubscriptionOptions> = {}): LiveSubscription {
  const subscription = new LiveSubscription({
    client: direct.client,
    credentials: SUBSCRIBER,
    targets: [TARGET],
    start: null,
    queueLimit: 10,
    resumeLimit: 5,
    retryMs: 10,
    onEnd: () => (ends += 1),
    ...options,
  });
  subscriptions.push(subscription);
  subscription.begin();
  return subscription;
}

/** History reads the subscription made (the test's own reads are AC-POLL's). */
const reads = () => upstream.callsOf('smshistory', 'AC-1');

/** T-A's whole history as the events a poll loop would publish, indexed by seq. */
async function history(): Promise<Message[]> {
  const page = await direct.client.history(POLLER, { ...TARGET, start: 0, end: 100 });
  return page.messages
    .map((record, position) => {
      if (isUnreadable(record)) throw new Error('the growing upstream wrote an unreadable record');
      const event: Message = {
        kind: 'message',
        message: record,
        seq: page.totalCount - 1 - position,
        total: page.totalCount,
      };
      return event;
    })
    .reverse();
}

/** `count` new messages arrive upstream; returns their events, oldest first. */
async function arrive(count: number): Promise<Message[]> {
  upstream.add(TARGET.tid, count);
  return (await history()).slice(-count);
}

const at = (event: Message) => ({ seq: event.seq, id: event.message.id });
const positions = (event: Message): Positions => new Map([[TARGET.tid, at(event)]]);

/** The next `count` deliveries, each as tid, seq and message id. */
async function take(subscription: LiveSubscription, count: number) {
  const taken: Array<{ tid: string; seq: number; id: string }> = [];
  for (let i = 0; i < count; i += 1) {
    const { value, done } = await subscription.next();
    if (done || value.kind !== 'message')
      throw new Error(`not a message: ${JSON.stringify(value)}`);
    taken.push({ tid: value.target.tid, seq: value.seq, id: value.message.id });
  }
  return taken;
}

const delivered = (events: Message[]) =>
  events.map((e) => ({ tid: TARGET.tid, seq: e.seq, id: e.message.id }));

/** What is left once the subscription is ended: nothing (end() lets the reader drain first). */
async function rest(subscription: LiveSubscription): Promise<Delivery[]> {
  subscription.end();
  const left: Delivery[] = [];
  for await (const delivery of subscription) left.push(delivery);
  return left;
}

const resyncRequired = {
  kind: 'error',
  code: 'RESYNC_REQUIRED',
  message: expect.stringContaining('Live updates for T-A cannot resume'),
  positions: null,
};

describe('a live subscription', () => {
  it('delivers events in seq order and drops one it already has, without reading the history again', async () => {
    const subscription = subscribe();
    await until(() => reads() === 1);
    const [a, b, c] = (await arrive(3)) as [Message, Message, Message];
    for (const event of [a, b, a, b, c, c]) subscription.onEvent(TARGET.tid, event);
    expect((await subscription.next()).value).toEqual({
      kind: 'message',
      target: TARGET,
      message: a.message,
      seq: 6,
      total: 9,
      positions: positions(a),
    });
    expect(await take(subscription, 2)).toEqual(delivered([b, c]));
    expect(await rest(subscription)).toEqual([]);
    expect(reads()).toBe(1);
  });

  it('fills a gap by reading the history, so nothing is lost and nothing comes twice', async () => {
    const subscription = subscribe();
    await until(() => reads() === 1);
    const [a, b, c] = (await arrive(3)) as [Message, Message, Message];
    subscription.onEvent(TARGET.tid, c); // a and b were lost on the way
    expect(await take(subscription, 3)).toEqual(delivered([a, b, c]));
    expect(reads()).toBe(2);
    for (const event of [a, b, c]) subscription.onEvent(TARGET.tid, event);
    expect(await rest(subscription)).toEqual([]);
  });

  it('reads again when a poll loop reports a head further on than its own first read', async () => {
    const subscription = subscribe();
    await until(() => reads() === 1);
    const [a, b] = (await arrive(2)) as [Message, Message];
    subscription.onEvent(TARGET.tid, { kind: 'head', seq: b.seq, total: b.total });
    expect(await take(subscription, 2)).toEqual(delivered([a, b]));
    expect(reads()).toBe(2);
  });

  it('reads again after a resync that came while it was reading, which may have looked too early', async () => {
    let subscription: LiveSubscription | undefined;
    let lost: Message[] = [];
    const client: UpstreamClient = {
      ...direct.client,
      // Answered, not yet seen by the subscription: messages arrive, their events are lost.
      history: async (...args) => {
        const page = await direct.client.history(...args);
        if (lost.length === 0) {
          lost = await arrive(2);
          subscription!.onEvent(TARGET.tid, { kind: 'resync' });
        }
        return page;
      },
    };
    subscription = subscribe({ client });
    await until(() => reads() === 2);
    expect(await take(subscription, 2)).toEqual(delivered(lost));
  });

  it('starting afresh delivers nothing that was already there, only what arrives after', async () => {
    upstream.add(TARGET.tid, 2);
    const before = await history();
    const subscription = subscribe();
    await until(() => reads() === 1);
    const [next] = (await arrive(1)) as [Message];
    for (const event of [...before, next]) subscription.onEvent(TARGET.tid, event);
    expect(await take(subscription, 1)).toEqual(delivered([next]));
    expect(await rest(subscription)).toEqual([]);
  });

  it('resuming from a position delivers what arrived since, oldest first, then goes live', async () => {
    const head = (await history()).at(-1)!;
    const since = await arrive(4);
    const subscription = subscribe({ start: positions(head) });
    expect(await take(subscription, 3)).toEqual(delivered(since.slice(0, 3)));
    const last = await subscription.next();
    expect(last.value).toMatchObject({ seq: 9, positions: positions(since[3]!) });
    const [later] = (await arrive(1)) as [Message];
    subscription.onEvent(TARGET.tid, later);
    expect(await take(subscription, 1)).toEqual(delivered([later]));
    expect(reads()).toBe(1);
  });

  it('resumes up to resumeLimit messages back; one more, or a changed history, is RESYNC_REQUIRED', async () => {
    const head = (await history()).at(-1)!;
    const since = await arrive(6); // seqs 6 to 11; resumeLimit is 5
    const within = subscribe({ start: positions(since[0]!) });
    expect(await take(within, 5)).toEqual(delivered(since.slice(1)));

    for (const start of [
      positions(head),
      new Map([['T-A', { seq: 6, id: 'not-the-message-at-6' }]]),
    ]) {
      ends = 0;
      const beyond = subscribe({ start });
      expect(await beyond.next()).toEqual({ done: false, value: resyncRequired });
      expect(await beyond.next()).toEqual({ done: true, value: undefined });
      expect(ends).toBe(1);
    }
  });

  it('messages arriving between the two reads of a long resume are RESYNC_REQUIRED, not skipped', async () => {
    const from = (await history())[2]!;
    await arrive(30); // 33 missed, more than the first read's 20: a second read, sized for 33
    upstream.holdHistory((call) => {
      if (call.params.get('sys_id') !== 'AC-1' || call.params.get('history_end') === '20')
        return null;
      upstream.holdHistory(null);
      upstream.add(TARGET.tid, 2); // the page of 34 no longer reaches back to seq 2
      return Promise.resolve();
    });
    const subscription = subscribe({ start: positions(from), resumeLimit: 40 });
    expect(await subscription.next()).toEqual({ done: false, value: resyncRequired });
    expect(reads()).toBe(2);
  });

  it('a resume of several numbers waits for room in its queue instead of overflowing it', async () => {
    upstream.add(TARGET.tid, 4);
    upstream.add(OTHER.tid, 4);
    const start = new Map([TARGET, OTHER].map(({ tid }) => [tid, { seq: 5, id: '' }]));
    let answered = 0;
    const client: UpstreamClient = {
      ...direct.client,
      history: (...args) => direct.client.history(...args).finally(() => (answered += 1)),
    };
    const subscription = subscribe({ client, targets: [TARGET, OTHER], start, queueLimit: 3 });
    // Both reads answered: one number has filled the queue, and both wait for room.
    await until(() => answered === 2);
    const taken = await take(subscription, 8);
    for (const { tid } of [TARGET, OTHER])
      expect(taken.filter((t) => t.tid === tid).map((t) => t.seq)).toEqual([6, 7, 8, 9]);
    expect(await rest(subscription)).toEqual([]);
  });

  it('a reader queueLimit events behind is ended with SLOW_CONSUMER and the resume point of the last event it took', async () => {
    const subscription = subscribe({ queueLimit: 3 });
    await until(() => reads() === 1);
    const [took, ...behind] = (await arrive(5)) as [Message, ...Message[]];
    subscription.onEvent(TARGET.tid, took);
    expect(await take(subscription, 1)).toEqual(delivered([took]));
    for (const event of behind) subscription.onEvent(TARGET.tid, event); // 4 into a queue of 3
    expect(ends).toBe(1); // ended at once, not when the reader comes back
    expect(await subscription.next()).toEqual({
      done: false,
      value: {
        kind: 'error',
        code: 'SLOW_CONSUMER',
        message: expect.stringContaining('fell 3 events behind'),
        positions: positions(took),
      },
    });
    expect(await subscription.next()).toEqual({ done: true, value: undefined });
  });

  it('passes on an error from the poll loop, and one of its own history reads, then goes on', async () => {
    upstream.failWith({ status: 503, text: '' });
    const subscription = subscribe();
    expect((await subscription.next()).value).toMatchObject({
      kind: 'error',
      code: 'UPSTREAM_ERROR',
      message: 'Live updates for T-A could not read the history; trying again',
      positions: null,
    });
    upstream.failWith(null);
    await until(() => reads() === 2);
    subscription.onEvent(TARGET.tid, { kind: 'error', code: 'RATE_LIMITED', message: 'slow down' });
    expect((await subscription.next()).value).toEqual({
      kind: 'error',
      code: 'RATE_LIMITED',
      message: 'slow down',
      positions: null,
    });
    const [next] = (await arrive(1)) as [Message];
    subscription.onEvent(TARGET.tid, next);
    expect(await take(subscription, 1)).toEqual(delivered([next]));
  });

  it('return() ends iteration: a waiting read is done, later events are ignored, onEnd runs once', async () => {
    const subscription = subscribe();
    await until(() => reads() === 1);
    const waiting = subscription.next();
    expect(await subscription.return()).toEqual({ done: true, value: undefined });
    expect(await waiting).toEqual({ done: true, value: undefined });
    const [late] = (await arrive(1)) as [Message];
    subscription.onEvent(TARGET.tid, late);
    expect(await subscription.next()).toEqual({ done: true, value: undefined });
    await subscription.return();
    expect(ends).toBe(1);
  });

  it('leaving a for await loop early ends the subscription', async () => {
    const subscription = subscribe();
    await until(() => reads() === 1);
    const events = await arrive(2);
    for (const event of events) subscription.onEvent(TARGET.tid, event);
    const seen: number[] = [];
    for await (const delivery of subscription) {
      if (delivery.kind === 'message') seen.push(delivery.seq);
      break;
    }
    expect(seen).toEqual([events[0]!.seq]);
    expect(ends).toBe(1);
    expect(await subscription.next()).toEqual({ done: true, value: undefined });
  });
});
