/**
 * Resumable, isolated live delivery, in-process over SSE against a growing loopback upstream:
 * resume tokens (argument and Last-Event-ID), the resume bound (RESYNC_REQUIRED), a stuck
 * reader beside a healthy one (SLOW_CONSUMER with its token, nothing lost for either), events as
 * edges whose cursor pages `Number.messages`, and `tids: []`.
 */
import { describe, expect, it } from 'vitest';
import { liveStacks, type LiveStack } from '../fixtures/live-stack.js';
import { firstReads, POLL_PAGE, polled } from '../fixtures/live-reads.js';
import type { SseStream } from '../fixtures/sse.js';
import type { GrowingUpstream } from '../../support/growing-upstream.js';
import { until } from '../../support/wait.js';

const POLL_MS = 50;
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ADDED = 'subscription($t: String) { messageAdded(tids: ["T-A"], resumeToken: $t) { id } }';
const EDGES = `subscription { messageEdgeAdded(tids: ["T-A"]) {
  resumeToken number { tid } edge { cursor node { id body } } } }`;

const stacks = liveStacks();

function stack(live: { queueLimit?: number; resumeLimit?: number } = {}): Promise<LiveStack> {
  return stacks.start(
    { 'AC-1': ['T-A', 'T-B'] },
    { live: { pollMs: POLL_MS, pageSize: POLL_PAGE, ...live } },
  );
}

/** Subscriptions opened over each upstream: each reads T-A's history once as it begins. */
const begun = new WeakMap<GrowingUpstream, number>();
const counted = (s: LiveStack) => begun.set(s.upstream, (begun.get(s.upstream) ?? 0) + 1);

/** A subscription as AC-1 (plus `headers`). */
function open(
  s: LiveStack,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  counted(s);
  return s.open(query, { ...ONE, ...headers }, variables);
}

/**
 * Until every subscription opened has read the head (or what it missed) and a poll after that
 * has ended: what is added next is news to all of them, and anything a poll would send again
 * has been sent.
 */
async function settled(s: LiveStack) {
  await firstReads(s.upstream, begun.get(s.upstream) ?? 0);
  await polled(s.upstream);
}

const idsOf = (stream: SseStream) =>
  stream.events.map((e) => (e.data?.messageAdded as { id: string } | null)?.id);

describe('resumable delivery', () => {
  it('every event carries its resume token (payload and SSE id); the token resumes exactly after it', async () => {
    const s = await stack();
    const first = await open(s, ADDED);
    await settled(s);
    const early = s.upstream.add('T-A', 3);
    await first.waitFor(3);
    expect(idsOf(first)).toEqual(early);
    const tokens = first.events.map((e) => e.extensions?.resumeToken as string);
    expect(tokens.every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
    expect(first.ids).toEqual(tokens);
    first.close();

    // Two more arrive while no one listens; resuming after the second event of the three.
    const late = s.upstream.add('T-A', 2);
    const resumed = await open(s, ADDED, { t: tokens[1] });
    await resumed.waitFor(3);
    await settled(s);
    const more = s.upstream.add('T-A', 1);
    await resumed.waitFor(4);
    await settled(s);
    expect(idsOf(resumed)).toEqual([early[2], ...late, ...more]);
  });

  it('Last-Event-ID resumes too, and wins over the argument', async () => {
    const s = await stack();
    const first = await open(s, ADDED);
    await settled(s);
    const ids = s.upstream.add('T-A', 2);
    await first.waitFor(2);
    first.close();
    const missed = s.upstream.add('T-A', 1);
    const stream = await open(s, ADDED, { t: first.ids[0] }, { 'last-event-id': first.ids[1]! });
    await stream.waitFor(1);
    await settled(s);
    expect(idsOf(stream)).toEqual(missed);
    expect(ids).toHaveLength(2);
  });

  it('a token too far behind is RESYNC_REQUIRED, once, and the stream ends', async () => {
    const s = await stack({ resumeLimit: 5 });
    const first = await open(s, ADDED);
    await settled(s);
    s.upstream.add('T-A', 1);
    await first.waitFor(1);
    first.close();
    s.upstream.add('T-A', 6);
    const stream = await open(s, ADDED, { t: first.ids[0] });
    await until(() => stream.done(), 15_000);
    expect(stream.events).toHaveLength(1);
    expect(stream.events[0]?.errors?.[0]?.extensions?.code).toBe('RESYNC_REQUIRED');
    expect(stream.events[0]?.errors?.[0]?.message).toMatch(/Refetch Number.messages/);
  });

  it('a token this gateway did not issue is BAD_USER_INPUT before any history read', async () => {
    const s = await stack();
    const before = s.upstream.callsOf('smshistory');
    const stream = await open(s, ADDED, { t: 'made-up.token' });
    await stream.waitFor(1);
    expect(stream.events[0]?.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      argumentName: 'resumeToken',
    });
    expect(s.upstream.callsOf('smshistory')).toBe(before);
  });

  it('a Last-Event-ID this gateway did not issue is refused as that header, not as `resumeToken`', async () => {
    const s = await stack();
    const stream = await open(s, ADDED, {}, { 'last-event-id': 'made-up.token' });
    await stream.waitFor(1);
    const error = stream.events[0]?.errors?.[0];
    expect(error?.extensions).toEqual({ code: 'BAD_USER_INPUT' });
    expect(error?.message).toMatch(/^messageAdded: the `Last-Event-ID` header is not a token/);
    expect(error?.message).not.toContain('resumeToken`');
  });

  it('tids: [] is BAD_USER_INPUT, not a stream that never says anything', async () => {
    const s = await stack();
    const stream = await open(s, 'subscription { messageAdded(tids: []) { id } }');
    await stream.waitFor(1);
    expect(stream.events[0]?.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      argumentName: 'tids',
    });
  });
});

describe('resume tokens across keys: a restart without the secret, a rotation', () => {
  const KEY_A = 'resume-key-a-'.repeat(3);
  const KEY_B = 'resume-key-b-'.repeat(3);
  const keyed = (cursorKey: string, previousCursorKey?: string) => ({
    cursorKey,
    ...(previousCursorKey ? { previousCursorKey } : {}),
    live: { pollMs: POLL_MS, pageSize: POLL_PAGE },
  });

  /** A stack under KEY_A whose subscriber saw one message, then left: its token, and one missed. */
  async function tokenUnderA() {
    const s = await stacks.start({ 'AC-1': ['T-A'] }, keyed(KEY_A));
    const first = await open(s, ADDED);
    await settled(s);
    s.upstream.add('T-A', 1);
    await first.waitFor(1);
    first.close();
    const missed = s.upstream.add('T-A', 1);
    return { s, token: first.ids[0]!, missed };
  }

  it('a token signed with a key this gateway does not have is RESYNC_REQUIRED, argument or Last-Event-ID, before any history read', async () => {
    const { s, token } = await tokenUnderA();
    const other = stacks.gatewayOver(s.upstream, keyed(KEY_B));
    const before = s.upstream.callsOf('smshistory');
    const byArgument = await open(other, ADDED, { t: token });
    const byHeader = await open(other, ADDED, {}, { 'last-event-id': token });
    await byArgument.waitFor(1);
    await byHeader.waitFor(1);
    for (const stream of [byArgument, byHeader]) {
      expect(stream.events).toHaveLength(1);
      expect(stream.events[0]?.errors?.[0]?.extensions).toEqual({ code: 'RESYNC_REQUIRED' });
      expect(stream.events[0]?.errors?.[0]?.message).toMatch(/subscribe without a token/);
    }
    expect(byArgument.events[0]?.errors?.[0]?.message).toMatch(/: `resumeToken` was signed/);
    expect(byHeader.events[0]?.errors?.[0]?.message).toMatch(/: the `Last-Event-ID` header was/);
    expect(s.upstream.callsOf('smshistory')).toBe(before);
  });

  it('a gateway with secret B and previous A resumes a token signed with A, and signs anew with B', async () => {
    const { s, token, missed } = await tokenUnderA();
    const rotated = stacks.gatewayOver(s.upstream, keyed(KEY_B, KEY_A));
    const resumed = await open(rotated, ADDED, { t: token });
    await resumed.waitFor(1);
    expect(idsOf(resumed)).toEqual(missed);
    // Its new token is B's: a copy with B alone (the rotation over) accepts it.
    const newToken = resumed.ids[0]!;
    resumed.close();
    const after = stacks.gatewayOver(s.upstream, keyed(KEY_B));
    const later = s.upstream.add('T-A', 1);
    const again = await open(after, ADDED, { t: newToken });
    await again.waitFor(1);
    expect(idsOf(again)).toEqual(later);
  });
});

describe('slow readers', () => {
  it('a stuck reader is ended with SLOW_CONSUMER and its token; the healthy one gets every message once', async () => {
    const s = await stack({ queueLimit: 5 });
    const healthy = await open(s, ADDED);
    // Never read: its response body is not consumed past what the stream buffers.
    const stuck = await s.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...ONE },
      body: JSON.stringify({ query: ADDED }),
    });
    counted(s);
    await settled(s);
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      ids.push(...s.upstream.add('T-A', 5));
      await polled(s.upstream);
    }
    await healthy.waitFor(30).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(healthy.events)}`);
    });
    expect(idsOf(healthy)).toEqual(ids);
    expect(s.hub.stats.subscriptions).toBe(1);

    // The stuck reader, read at last: what it took, then SLOW_CONSUMER with where to resume.
    const text = await stuck.text();
    const payloads = text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map(
        (line) =>
          JSON.parse(line.slice(6)) as {
            data?: unknown;
            errors?: { extensions: Record<string, unknown> }[];
          },
      );
    const last = payloads.at(-1)!;
    expect(last.errors?.[0]?.extensions.code).toBe('SLOW_CONSUMER');
    const token = last.errors?.[0]?.extensions.resumeToken as string;
    expect(token).toEqual(expect.any(String));
    const got = payloads
      .slice(0, -1)
      .map((p) => (p.data as { messageAdded: { id: string } }).messageAdded.id);
    const resumed = await open(s, ADDED, { t: token });
    await resumed.waitFor(ids.length - got.length);
    await settled(s);
    expect([...got, ...idsOf(resumed)]).toEqual(ids);
  });
});

describe('events as edges of Number.messages', () => {
  it('edge.cursor pages the list: after it come the messages that were there before', async () => {
    const s = await stack();
    const stream = await open(s, EDGES);
    await settled(s);
    const [id] = s.upstream.add('T-A', 1);
    await stream.waitFor(1);
    const event = stream.events[0]?.data?.messageEdgeAdded as {
      resumeToken: string;
      number: { tid: string };
      edge: { cursor: string; node: { id: string } };
    };
    expect(event.number.tid).toBe('T-A');
    expect(event.edge.node.id).toBe(id);
    expect(event.resumeToken).toBe(stream.ids[0]);
    s.upstream.add('T-A', 2);
    const page = await s.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ONE },
      body: JSON.stringify({
        query: `query($after: String, $before: String) { number(tid: "T-A") {
          older: messages(first: 3, after: $after) { edges { node { id } } }
          newer: messages(last: 5, before: $before) { edges { node { id } } } } }`,
        variables: { after: event.edge.cursor, before: event.edge.cursor },
      }),
    });
    const body = (await page.json()) as {
      data: { number: { older: { edges: unknown[] }; newer: { edges: unknown[] } } };
    };
    expect(body.data.number.older.edges).toHaveLength(3);
    expect(body.data.number.newer.edges).toHaveLength(2);
  });
});
