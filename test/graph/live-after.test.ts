/**
 * `after:` on Subscription.messageAdded and messageEdgeAdded (src/graph/live.ts): a list's head
 * cursor starts the stream where the list stands, so what arrived between the list and the
 * subscription is delivered first, once, oldest first, then the live messages. Bad cursors are
 * refused before anything is watched. The race itself, many times at random delays, against the
 * built-in simulator through the gateway.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/graph/cursors.js';
import { encodeResumeToken } from '../../src/graph/resume-tokens.js';
import { DEMO_CREDENTIALS, DEMO_ACCOUNT } from '../../src/simulator/index.js';
import { startRecordingUpstream } from '../../support/recording-upstream.js';
import { sleep, until } from '../../support/wait.js';
import { basicAuth, createTestGateway, executeText } from '../fixtures/harness.js';
import { liveStacks, type LiveStack } from '../fixtures/live-stack.js';
import { refusedWith } from './refusal.js';
import { POLL_PAGE } from '../fixtures/live-reads.js';
import { subscribeSse } from '../fixtures/sse.js';

const KEY = 'graph-live-after-test-key-0123456789ab';
const codec = createCursorCodec(KEY);
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const TWO = { 'x-sys-id': 'AC-2', 'x-auth-token': 'tok-AC-2' };

const LIST = `query List($tid: ID!, $first: Int) { number(tid: $tid) {
  messages(first: $first) { edges { cursor node { id } } } } }`;
const ADDED_AFTER = `subscription($tids: [ID!], $after: [String!], $token: String) {
  messageAdded(tids: $tids, after: $after, resumeToken: $token) { id tid } }`;
const EDGES_AFTER = `subscription($tids: [ID!], $after: [String!]) {
  messageEdgeAdded(tids: $tids, after: $after) { edge { cursor node { id } } } }`;

interface ListData {
  number: { messages: { edges: { cursor: string; node: { id: string } }[] } | null } | null;
}

const stacks = liveStacks();
const stack = (): Promise<LiveStack> =>
  stacks.start(
    { 'AC-1': ['T-A', 'T-B'], 'AC-2': ['T-C'] },
    { cursorKey: KEY, live: { pollMs: 50, pageSize: POLL_PAGE } },
  );

/** The cursors of the `first` newest messages of `tid`, newest first, as a client lists them. */
async function listed(s: LiveStack, tid: string, headers = ONE, first = 2): Promise<string[]> {
  const { body } = await executeText<ListData>(s.gateway, LIST, { tid, first }, headers);
  expect(body.errors).toBeUndefined();
  return body.data!.number!.messages!.edges.map((e) => e.cursor);
}

type Stream = Awaited<ReturnType<LiveStack['open']>>;

/** The message id of an event of either subscription. */
function idOf(event: Stream['events'][number]): string | undefined {
  const data = event.data as
    | { messageAdded?: { id: string }; messageEdgeAdded?: { edge: { node: { id: string } } } }
    | null
    | undefined;
  return data?.messageAdded?.id ?? data?.messageEdgeAdded?.edge.node.id;
}

/**
 * The stream's events once it has settled: a message added last on each number is waited for (a
 * repeat or a stray event comes before it, each number's messages in order), then left out.
 * A condition, not a pause: a busy machine only makes it take longer.
 */
async function settled(s: LiveStack, tids: readonly string[], ...streams: Stream[]) {
  const sentinels = new Set(tids.map((tid) => s.upstream.add(tid, 1)[0]!));
  const seenAll = (stream: Stream) =>
    [...sentinels].every((id) => stream.events.some((e) => idOf(e) === id));
  await until(() => streams.every(seenAll), 5_000);
  return streams.map((stream) => stream.events.filter((e) => !sentinels.has(idOf(e) ?? '')));
}

/** The one error a refused messageAdded(after:) answers with. */
const refusal = (s: LiveStack, variables: Record<string, unknown>, headers = ONE) =>
  refusedWith(s, ADDED_AFTER, headers, variables);

describe('after: from the list to the stream', () => {
  it('delivers what arrived since the head of the list first, oldest first, then the live ones', async () => {
    const s = await stack();
    const [head] = await listed(s, 'T-A');
    const since = s.upstream.add('T-A', 3);
    const stream = await s.open(ADDED_AFTER, ONE, { tids: ['T-A'], after: [head] });
    await stream.waitFor(3);
    const [live] = s.upstream.add('T-A', 1);
    await stream.waitFor(4);
    expect((await settled(s, ['T-A'], stream))[0]!.map((e) => e.data)).toEqual(
      [...since, live].map((id) => ({ messageAdded: { id, tid: 'T-A' } })),
    );
  });

  it('one cursor per number: each starts where its list stands; a number without one at its head', async () => {
    const s = await stack();
    const [headA] = await listed(s, 'T-A');
    const [headB] = await listed(s, 'T-B');
    const [onA] = s.upstream.add('T-A', 1);
    const [onB] = s.upstream.add('T-B', 1);
    // A single cursor is a list of one (GraphQL's input coercion).
    const both = await s.open(ADDED_AFTER, ONE, { after: [headA, headB] });
    const justA = await s.open(ADDED_AFTER, ONE, { after: headA });
    await both.waitFor(2);
    await justA.waitFor(1);
    const ids = (events: typeof both.events) =>
      events.map((e) => (e.data?.messageAdded as { id: string }).id).sort();
    const [bothEvents, justAEvents] = (await settled(s, ['T-A', 'T-B'], both, justA)) as [
      Stream['events'],
      Stream['events'],
    ];
    expect(ids(bothEvents)).toEqual([onA, onB].sort());
    expect(ids(justAEvents)).toEqual([onA]);
  });

  it('messageEdgeAdded: the edges since the head, whose cursors page on like the list’s', async () => {
    const s = await stack();
    const [head] = await listed(s, 'T-A');
    const since = s.upstream.add('T-A', 2);
    const stream = await s.open(EDGES_AFTER, ONE, { tids: ['T-A'], after: [head] });
    await stream.waitFor(2);
    const edges = stream.events.map(
      (e) => (e.data?.messageEdgeAdded as { edge: { cursor: string; node: { id: string } } }).edge,
    );
    expect(edges.map((e) => e.node.id)).toEqual(since);
    // The newest edge's cursor, passed as `after` again, starts after it: nothing twice.
    const [next] = s.upstream.add('T-A', 1);
    const resumed = await s.open(EDGES_AFTER, ONE, { tids: ['T-A'], after: [edges[1]!.cursor] });
    await resumed.waitFor(1);
    const [resumedEvents] = (await settled(s, ['T-A'], resumed)) as [Stream['events']];
    expect(resumedEvents).toHaveLength(1);
    expect(resumedEvents[0]?.data).toMatchObject({
      messageEdgeAdded: { edge: { node: { id: next } } },
    });
  });

  it('a resume token wins over `after` for the numbers it names (a reconnect resends both)', async () => {
    const s = await stack();
    const [head] = await listed(s, 'T-A');
    const [first, second] = s.upstream.add('T-A', 2);
    // Delivered up to `first` already: the token says so, `after` is older.
    const token = encodeResumeToken(codec, new Map([['T-A', { seq: 3, id: first! }]]));
    const stream = await s.open(ADDED_AFTER, ONE, { tids: ['T-A'], after: [head], token });
    await stream.waitFor(1);
    expect((await settled(s, ['T-A'], stream))[0]!.map((e) => e.data)).toEqual([
      { messageAdded: { id: second, tid: 'T-A' } },
    ]);
  });
});

describe('after: refusals, before anything is watched', () => {
  it('text that is not a cursor is BAD_USER_INPUT naming `after`, before any upstream call', async () => {
    const s = await stack();
    const error = await refusal(s, { tids: ['T-A'], after: ['junk'] });
    expect(error.message).toMatch(
      /^messageAdded: `after` is not a list of cursors this gateway issued/,
    );
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'after' });
    expect(s.upstream.calls).toHaveLength(0);
    expect(s.hub.stats).toMatchObject({ topics: 0, subscriptions: 0 });
  });

  it('an edited or foreign-key cursor is RESYNC_REQUIRED, as for pages and resume tokens', async () => {
    const s = await stack();
    const [head] = await listed(s, 'T-A');
    const [body, mac] = head!.split('.') as [string, string];
    const edited = `${Buffer.from(
      Buffer.from(body, 'base64url').toString().replace('\nT-A\n', '\nT-B\n'),
    ).toString('base64url')}.${mac}`;
    const foreign = createCursorCodec('another-key-0123456789abcdef').encode({
      tid: 'T-A',
      id: 'x',
      offset: 0,
      total: 3,
    });
    for (const after of [edited, foreign]) {
      const error = await refusal(s, { tids: ['T-A'], after: [after] });
      expect(error.extensions).toEqual({ code: 'RESYNC_REQUIRED' });
      expect(error.message).toMatch(
        /`after` holds a cursor signed with a key this gateway no longer has/,
      );
    }
    expect(s.hub.stats).toMatchObject({ subscriptions: 0 });
  });

  it('a cursor of a number not watched, two of one number, or another account’s is BAD_USER_INPUT', async () => {
    const s = await stack();
    const [headA, nextA] = await listed(s, 'T-A');
    const [headB] = await listed(s, 'T-B');
    const [headC] = await listed(s, 'T-C', TWO);

    const stray = await refusal(s, { tids: ['T-A'], after: [headB] });
    expect(stray.message).toBe(
      'messageAdded: `after` holds a cursor of number "T-B", which this subscription does not watch; add it to `tids`, or leave the cursor out',
    );
    expect(stray.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'after' });

    const twice = await refusal(s, { tids: ['T-A'], after: [headA, nextA] });
    expect(twice.message).toBe(
      'messageAdded: `after` holds two cursors of one number; pass only the head of its list',
    );

    // AC-2 with AC-1's cursor, whether it names its number or the token's shorter form does.
    const other = await refusal(s, { after: [headA] }, TWO);
    expect(other.message).toBe('messageAdded: `after` holds a cursor issued to another account');
    expect(other.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'after' });
    const bare = codec.encode({ tid: 'T-A', id: 'x', offset: 0, total: 3 });
    const unowned = await refusal(s, { after: [bare] }, TWO);
    expect(unowned.message).toBe(
      'messageAdded: `after` holds a cursor of number "T-A", which this subscription does not watch (the account has no such number)',
    );
    // Its own cursor is fine.
    const own = await s.open(ADDED_AFTER, TWO, { after: [headC] });
    await until(() => s.hub.stats.subscriptions === 1);
    own.close();
    // No subscription was left behind by the refusals.
    await until(() => s.hub.stats.subscriptions === 0);
  });

  it('a head more messages behind than a resume reaches is RESYNC_REQUIRED in the stream', async () => {
    const s = await stacks.start(
      { 'AC-1': ['T-A'] },
      { cursorKey: KEY, live: { pollMs: 50, pageSize: POLL_PAGE, resumeLimit: 3 } },
    );
    const [head] = await listed(s, 'T-A');
    s.upstream.add('T-A', 5);
    const stream = await s.open(ADDED_AFTER, ONE, { after: [head] });
    await stream.waitFor(1);
    expect(stream.events[0]?.errors?.[0]?.extensions).toMatchObject({ code: 'RESYNC_REQUIRED' });
  });
});

describe('the race: list, arrivals, subscribe with the head, more arrivals', () => {
  it('delivers every message after the head, none twice, in order, whatever the timing', async () => {
    const simulator = await startRecordingUpstream();
    const test = createTestGateway(simulator.url, { cursorKey: KEY, live: { pollMs: 15 } });
    const auth = basicAuth(DEMO_CREDENTIALS);
    const number = DEMO_ACCOUNT.numbers.find((n) => n.tid === 'TN-T-0003')!;
    let arrivals = 0;
    const arrive = () =>
      simulator.deliver(DEMO_CREDENTIALS.sysId, number.tid, `race ${(arrivals += 1)}`).message_id;
    try {
      await fc.assert(
        fc.asyncProperty(
          // Arrivals before subscribing (after the list), each after its delay in ms; arrivals
          // while and after the subscription starts, each at its delay from the subscribe call.
          fc.array(fc.integer({ min: 0, max: 15 }), { maxLength: 3 }),
          fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 3 }),
          async (before, during) => {
            const { body } = await executeText<ListData>(
              test.gateway,
              LIST,
              { tid: number.tid, first: 5 },
              auth,
            );
            const head = body.data!.number!.messages!.edges[0]!.cursor;
            const expected: string[] = [];
            for (const delay of before) {
              await sleep(delay);
              expected.push(arrive());
            }
            const timers = [...during]
              .sort((a, b) => a - b)
              .map((delay) => sleep(delay).then(() => arrive()));
            const stream = await subscribeSse(test.gateway, EDGES_AFTER, auth, {
              tids: [number.tid],
              after: [head],
            });
            try {
              for (const timer of timers) expected.push(await timer);
              // One more, last: a repeat of any before it would come before it, in order.
              expected.push(arrive());
              await stream.waitFor(expected.length, 3_000);
              const ids = stream.events.map(
                (e) =>
                  (e.data?.messageEdgeAdded as { edge: { node: { id: string } } }).edge.node.id,
              );
              expect(ids).toEqual(expected);
            } finally {
              stream.close();
              await until(() => test.live!.stats.subscriptions === 0);
            }
          },
        ),
        { numRuns: 20, seed: 51, endOnFailure: true },
      );
    } finally {
      await test.close();
      await simulator.close();
    }
  }, 30_000);
});
