/**
 * src/graph/live.ts, the GraphQL side of live updates: what Subscription.messageAdded checks
 * before it subscribes and in which order, the resume token each result leaves for the transport
 * (takeResumeToken), and how each kind of delivery becomes a result. Deliveries are resolved
 * directly through the schema; streams run over SSE against a real loopback upstream.
 * (Delivery, sharing, limits and resuming as such: test/live/*.test.ts.)
 */
import { execute, parse, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/graph/cursors.js';
import { takeResumeToken } from '../../src/graph/live.js';
import {
  decodeResumeToken,
  encodeResumeToken,
  MAX_WATCHED_NUMBERS,
} from '../../src/graph/resume-tokens.js';
import { schema } from '../../src/graph/schema.js';
import type { Message } from '../../src/core/domain.js';
import type { Delivery, Positions } from '../../src/live/subscription.js';
import { firstReads, POLL_PAGE, polled } from '../fixtures/live-reads.js';
import { liveStacks, type LiveStack } from '../fixtures/live-stack.js';
import { refusedWith } from './refusal.js';
import { until } from '../../support/wait.js';

const KEY = 'graph-live-test-key-0123456789abcdef';
const codec = createCursorCodec(KEY);
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const REFUSED = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-wrong' };
const ADDED = 'subscription { messageAdded { id tid body } }';
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id } }';
const EDGE =
  'subscription { messageEdgeAdded { resumeToken number { tid } edge { cursor node { id } } } }';
/** The number T-A, as a subscription watches it. */
const T_A = { tid: 'T-A', number: '15550000001' };
const ON_TIDS = 'subscription($tids: [ID!]) { messageAdded(tids: $tids) { id } }';

/** `count` tids: T-0, T-1, … */
const tidsUpTo = (count: number): string[] => Array.from({ length: count }, (_, i) => `T-${i}`);

const at = (entries: Record<string, [number, string]>): Positions =>
  new Map(Object.entries(entries).map(([tid, [seq, id]]) => [tid, { seq, id }]));

const MESSAGE: Message = {
  id: 'm-7',
  systemId: '7',
  sentAt: new Date('2026-11-23T10:00:00Z'),
  tid: 'T-A',
  phone: '15550000000',
  direction: 'INBOUND',
  body: 'hello',
  mms: false,
  mediaUrl: null,
  status: { code: 200, text: 'Message delivered', ok: true, raw: '200 Message delivered' },
};

/** MESSAGE as the seventh of T-A's history, delivered with `positions` taken. */
const seventh = (positions: Positions): Delivery => ({
  kind: 'message',
  target: T_A,
  message: MESSAGE,
  seq: 6,
  total: 7,
  positions,
});

/** An error event of a subscription, with the resume point it carries (if any). */
const failure = (code: string, positions: Positions | null): Delivery => ({
  kind: 'error',
  code,
  message: `${code} here`,
  positions,
});

/** One delivery resolved as the transport does; the context it left its token on. */
async function resolve(delivery: Delivery, query = ADDED) {
  const context = { cursors: codec, account: () => ({ credentials: { sysId: 'AC-1' } }) };
  const result = (await execute({
    schema,
    document: parse(query),
    rootValue: delivery,
    contextValue: context,
  })) as ExecutionResult;
  return { result, context };
}

describe('a delivery as a result, and the resume token it leaves (takeResumeToken)', () => {
  it('a message is the field value; its token names the positions, taken once, by its context only', async () => {
    const positions = at({ 'T-A': [6, 'm-7'], 'T-B': [2, 'm-2'] });
    const { result, context } = await resolve(seventh(positions));
    expect(result).toEqual({ data: { messageAdded: { id: 'm-7', tid: 'T-A', body: 'hello' } } });
    expect(takeResumeToken({ cursors: codec })).toBeUndefined();
    const token = takeResumeToken(context);
    expect(decodeResumeToken(codec, token!)).toEqual(positions);
    expect(takeResumeToken(context)).toBeUndefined();
  });

  it('an unreadable message is UPSTREAM_ERROR naming the number, carrying the token past it', async () => {
    const positions = at({ 'T-A': [3, 'm-bad'] });
    const { result, context } = await resolve({
      kind: 'unreadable',
      target: T_A,
      id: 'm-bad',
      reason: 'GMTdate "soon"',
      seq: 3,
      total: 4,
      positions,
    });
    const token = takeResumeToken(context);
    expect(decodeResumeToken(codec, token!)).toEqual(positions);
    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.message).toBe(
      'A new message on T-A could not be read: GMTdate "soon"',
    );
    expect(result.errors?.[0]?.path).toEqual(['messageAdded']);
    expect(result.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_ERROR', resumeToken: token });
  });

  it('an error keeps its code and message; SLOW_CONSUMER carries its token, RESYNC_REQUIRED none', async () => {
    const positions = at({ 'T-A': [4, 'm-4'] });
    const slow = await resolve(failure('SLOW_CONSUMER', positions));
    const token = takeResumeToken(slow.context);
    expect(decodeResumeToken(codec, token!)).toEqual(positions);
    expect(slow.result.errors?.[0]?.message).toBe('SLOW_CONSUMER here');
    expect(slow.result.errors?.[0]?.extensions).toEqual({
      code: 'SLOW_CONSUMER',
      resumeToken: token,
    });

    const resync = await resolve(failure('RESYNC_REQUIRED', null));
    expect(takeResumeToken(resync.context)).toBeUndefined();
    expect(resync.result.errors?.[0]?.message).toBe('RESYNC_REQUIRED here');
    expect(resync.result.errors?.[0]?.extensions).toEqual({ code: 'RESYNC_REQUIRED' });
  });

  it('a token naming the most numbers one subscription watches is one the gateway takes back', async () => {
    const most = new Map(
      tidsUpTo(MAX_WATCHED_NUMBERS).map((tid, i) => [tid, { seq: i, id: `m-${i}` }]),
    );
    const { context } = await resolve(seventh(most));
    expect(decodeResumeToken(codec, takeResumeToken(context)!)).toEqual(most);
  });

  it('messageEdgeAdded: the event repeats the token and names its number; an unreadable message or an error is the same error as for messageAdded', async () => {
    const delivery = seventh(at({ 'T-A': [6, 'm-7'] }));
    const watched = await resolve(delivery, EDGE);
    const token = takeResumeToken(watched.context);
    const event = watched.result.data?.messageEdgeAdded as {
      resumeToken: string;
      number: { tid: string };
      edge: { cursor: string };
    };
    expect(event.resumeToken).toBe(token);
    expect(event.number).toEqual({ tid: 'T-A' });
    expect(codec.decode(event.edge.cursor).cursor).toEqual({
      tid: 'T-A',
      id: 'm-7',
      offset: 0,
      total: 7,
      // As a page's cursors: paging on from it needs no lookup of the number.
      owner: { number: T_A.number, account: codec.accountTag('AC-1') },
    });

    const unreadable = await resolve(
      {
        kind: 'unreadable',
        target: T_A,
        id: null,
        reason: 'no date',
        seq: 7,
        total: 8,
        positions: at({ 'T-A': [7, ''] }),
      },
      EDGE,
    );
    expect(unreadable.result.errors?.[0]?.message).toBe(
      'A new message on T-A could not be read: no date',
    );
    expect(unreadable.result.errors?.[0]?.extensions).toEqual({
      code: 'UPSTREAM_ERROR',
      resumeToken: takeResumeToken(unreadable.context),
    });
    const slow = await resolve(failure('SLOW_CONSUMER', null), EDGE);
    expect(slow.result.errors?.[0]?.message).toBe('SLOW_CONSUMER here');
    expect(slow.result.errors?.[0]?.extensions).toEqual({ code: 'SLOW_CONSUMER' });
  });

  it('a delivery without a position leaves no token: not one an earlier result left untaken', async () => {
    const context = { cursors: codec };
    const run = (delivery: Delivery) =>
      execute({ schema, document: parse(ADDED), rootValue: delivery, contextValue: context });
    await run(seventh(at({ 'T-A': [6, 'm-7'] })));
    const failed = (await run(failure('UPSTREAM_ERROR', null))) as ExecutionResult;
    expect(failed.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_ERROR' });
    expect(takeResumeToken(context)).toBeUndefined();
  });
});

const stacks = liveStacks();
const stack = (live: { failuresBeforeError?: number } = {}): Promise<LiveStack> =>
  stacks.start(
    { 'AC-1': ['T-A', 'T-B'], 'AC-2': ['T-C'] },
    { cursorKey: KEY, live: { pollMs: 50, pageSize: POLL_PAGE, ...live } },
  );

/** The one error a refused subscription answers with (its stream holds nothing else). */
const refusal = (
  s: LiveStack,
  query: string,
  headers: Record<string, string> = ONE,
  variables?: Record<string, unknown>,
) => refusedWith(s, query, headers, variables);

describe('Subscription.messageAdded: arguments', () => {
  it('names every tid the account lacks, each once, another account’s and a bare number included', async () => {
    const s = await stack();
    const error = await refusal(
      s,
      'subscription { messageAdded(tids: ["T-A", "T-C", "T-Z", 7, "T-Z", "T-C"]) { id } }',
    );
    expect(error.message).toBe(
      'messageAdded: this account has no number with tid "T-C", "T-Z", "7"',
    );
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'tids' });
    expect(s.upstream.callsOf('smshistory')).toBe(0);
    expect(s.hub.stats).toMatchObject({ topics: 0, subscriptions: 0 });
  });

  it('names ten missing tids at most, then counts the rest', async () => {
    const s = await stack();
    const missing = tidsUpTo(25).map((tid) => `X${tid}`);
    const error = await refusal(s, ON_TIDS, ONE, { tids: ['T-A', ...missing, 'T-B'] });
    expect(error.message).toBe(
      `messageAdded: this account has no number with tid ${missing
        .slice(0, 10)
        .map((tid) => `"${tid}"`)
        .join(', ')} and 15 more`,
    );
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'tids' });
    expect(s.upstream.callsOf('smshistory')).toBe(0);
  });

  it('refuses more tids than one subscription watches, counted once each, before any upstream call', async () => {
    const s = await stack();
    const over = await refusal(s, ON_TIDS, ONE, { tids: tidsUpTo(MAX_WATCHED_NUMBERS + 1) });
    expect(over.message).toBe(
      'messageAdded: `tids` names 501 numbers, more than the 500 one subscription watches; split them across subscriptions',
    );
    expect(over.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'tids' });
    expect(s.upstream.calls).toHaveLength(0);
    expect(s.hub.stats).toMatchObject({ topics: 0, subscriptions: 0 });
    // The most, each given twice: not too many, so they are looked up (and this account lacks them).
    const most = tidsUpTo(MAX_WATCHED_NUMBERS);
    const lookedUp = await refusal(s, ON_TIDS, ONE, { tids: [...most, ...most] });
    expect(lookedUp.message).toMatch(/no number with tid "T-0", .*"T-9" and 490 more$/);
  });

  it('an account with more numbers than one subscription watches is asked for tids; one with that many is watched', async () => {
    const s = await stacks.start(
      { 'AC-BIG': tidsUpTo(MAX_WATCHED_NUMBERS + 1), 'AC-MOST': tidsUpTo(MAX_WATCHED_NUMBERS) },
      { cursorKey: KEY, live: { pollMs: 60_000, pageSize: POLL_PAGE } },
    );
    const big = { 'x-sys-id': 'AC-BIG', 'x-auth-token': 'tok-AC-BIG' };
    const error = await refusal(s, ADDED, big);
    expect(error.message).toBe(
      'messageAdded: this account has 501 numbers, more than the 500 one subscription watches; pass `tids`, split across subscriptions',
    );
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'tids' });
    expect(s.upstream.callsOf('smshistory')).toBe(0);
    expect(s.hub.stats).toMatchObject({ topics: 0, subscriptions: 0 });
    // Its first 500 by tids, and an account of 500 leaving tids out, are watched.
    await s.open(ON_TIDS, big, { tids: tidsUpTo(MAX_WATCHED_NUMBERS) });
    await s.open(ADDED, { 'x-sys-id': 'AC-MOST', 'x-auth-token': 'tok-AC-MOST' });
    await until(() => s.hub.stats.subscriptions === 2, 15_000);
    expect(s.hub.stats.topics).toBe(2 * MAX_WATCHED_NUMBERS);
  });

  it('refuses in order, off first, then tids, then the token, all before the service hears of the credentials', async () => {
    const s = await stack();
    const off = stacks.gatewayOver(s.upstream, { cursorKey: KEY });
    const both = 'subscription { messageAdded(tids: [], resumeToken: "junk") { id } }';
    expect((await refusal(off, both, REFUSED)).extensions).toEqual({ code: 'LIVE_UPDATES_OFF' });
    expect((await refusal(s, both, REFUSED)).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      argumentName: 'tids',
    });
    const token = await refusal(
      s,
      'subscription { messageAdded(tids: ["T-A"], resumeToken: "junk") { id } }',
      REFUSED,
    );
    expect(token.message).toMatch(
      /^messageAdded: `resumeToken` is not a token this gateway issued/,
    );
    expect(token.extensions).toEqual({ code: 'BAD_USER_INPUT', argumentName: 'resumeToken' });
    expect(s.upstream.calls).toHaveLength(0);
    // Valid arguments: now the service is asked, and its refusal is the answer.
    const denied = await refusal(s, ON_A, REFUSED);
    expect(denied.extensions).toEqual({ code: 'UNAUTHENTICATED' });
    expect(denied.message).toMatch(/refused these credentials/);
    expect(s.upstream.calls.length).toBeGreaterThan(0);
    expect(s.upstream.callsOf('smshistory')).toBe(0);
  });
});

describe('Subscription.messageAdded: what each event carries', () => {
  it('every number watched: each result has the message and a token naming where it stands in every number', async () => {
    const s = await stack();
    const stream = await s.open(ADDED, ONE);
    await firstReads(s.upstream, 2);
    const [onB] = s.upstream.add('T-B', 1);
    await stream.waitFor(1);
    const [onA] = s.upstream.add('T-A', 1);
    await stream.waitFor(2);
    expect(stream.events.map((e) => e.data)).toEqual([
      { messageAdded: { id: onB, tid: 'T-B', body: expect.stringMatching(/ on T-B$/) } },
      { messageAdded: { id: onA, tid: 'T-A', body: expect.stringMatching(/ on T-A$/) } },
    ]);
    const tokens = stream.events.map((e) => e.extensions?.resumeToken as string);
    expect(stream.ids).toEqual(tokens);
    const first = decodeResumeToken(codec, tokens[0]!) as Positions;
    expect(first.get('T-B')).toEqual({ seq: 3, id: onB });
    expect(first.get('T-A')).toEqual({ seq: 2, id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(decodeResumeToken(codec, tokens[1]!)).toEqual(
      at({ 'T-B': [3, onB!], 'T-A': [3, onA!] }),
    );
  });

  it('the token of a subscription watching the most numbers allowed resumes it (as the argument)', async () => {
    const s = await stacks.start(
      { 'AC-MOST': tidsUpTo(MAX_WATCHED_NUMBERS) },
      // Each subscription reads 500 histories: on a loaded 2-core machine (the whole suite) a
      // call could wait past the default 2 s deadline behind them, an UPSTREAM_TIMEOUT event.
      { cursorKey: KEY, live: { pollMs: 60_000, pageSize: POLL_PAGE }, timeoutMs: 15_000 },
    );
    const most = { 'x-sys-id': 'AC-MOST', 'x-auth-token': 'tok-AC-MOST' };
    const RESUME = 'subscription($t: String) { messageAdded(resumeToken: $t) { id tid } }';
    // Every number where it stood (3 messages), then one arrival on T-7 since.
    const [since] = s.upstream.add('T-7', 1);
    const stood = new Map(tidsUpTo(MAX_WATCHED_NUMBERS).map((tid) => [tid, { seq: 2, id: '' }]));
    const first = await s.open(RESUME, most, { t: encodeResumeToken(codec, stood) });
    await first.waitFor(1, 15_000);
    expect(first.events[0]?.data).toEqual({ messageAdded: { id: since, tid: 'T-7' } });
    const issued = first.ids[0]!;
    const positions = decodeResumeToken(codec, issued) as Positions;
    expect(positions.size).toBe(MAX_WATCHED_NUMBERS);
    expect(positions.get('T-7')).toEqual({ seq: 3, id: since });
    first.close();

    const [next] = s.upstream.add('T-8', 1);
    const resumed = await s.open(RESUME, most, { t: issued });
    await resumed.waitFor(1, 15_000);
    expect(resumed.events[0]?.data).toEqual({ messageAdded: { id: next, tid: 'T-8' } });
  }, 45_000);

  it('an unreadable arrival is an UPSTREAM_ERROR event whose token resumes after it (as the argument)', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, ONE);
    await firstReads(s.upstream, 1);
    const bad = s.upstream.addUnreadable('T-A');
    await stream.waitFor(1);
    const error = stream.events[0]?.errors?.[0];
    expect(error?.message).toMatch(/^A new message on T-A could not be read: .*GMTdate/);
    const token = error?.extensions?.resumeToken as string;
    expect(error?.extensions).toEqual({ code: 'UPSTREAM_ERROR', resumeToken: token });
    expect(stream.ids).toEqual([token]);
    expect(decodeResumeToken(codec, token)).toEqual(at({ 'T-A': [3, bad] }));
    stream.close();

    const [next] = s.upstream.add('T-A', 1);
    const resumed = await s.open(
      'subscription($t: String) { messageAdded(tids: ["T-A"], resumeToken: $t) { id } }',
      // An empty Last-Event-ID names no token: the argument is the one used.
      { ...ONE, 'last-event-id': '' },
      { t: token },
    );
    await resumed.waitFor(1);
    await polled(s.upstream);
    expect(resumed.events).toEqual([
      { data: { messageAdded: { id: next } }, extensions: { resumeToken: resumed.ids[0] } },
    ]);
  });

  it('a failing poll is an error event with no token and no SSE id: nothing was taken', async () => {
    const s = await stack({ failuresBeforeError: 1 });
    const stream = await s.open(ON_A, ONE);
    await firstReads(s.upstream, 1);
    s.upstream.failWith({ status: 503, text: '' });
    await stream.waitFor(1);
    s.upstream.failWith(null);
    expect(stream.events[0]?.data).toBeNull();
    expect(stream.events[0]?.extensions).toBeUndefined();
    expect(stream.events[0]?.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_ERROR' });
    expect(stream.ids).toEqual([undefined]);
  });
});
