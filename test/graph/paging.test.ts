/**
 * Number.messages paging against a real loopback upstream whose history grows on command:
 * exact smshistory call counts and ranges, forward and backward, messages arriving between
 * pages, refused arguments (no upstream call) and range coalescing with `history` fields.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/graph/cursors.js';
import { createTestGateway, execute, executeText, type TestGateway } from '../fixtures/harness.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import { CoalescedRangesQuery, MessagesPageQuery } from '../fixtures/operations.js';

const KEY = 'paging-test-key-'.repeat(3);
const auth = { 'x-sys-id': 'acct', 'x-auth-token': 'tok-acct' };

// Every test runs against a service of each reading of history_end, the gateway told which.
describe.each(['exclusive', 'inclusive'] as const)(
  'a service reading history_end as %s',
  (historyEnd) => {
    let upstream: GrowingUpstream;
    let test: TestGateway;
    let other: TestGateway;
    let tid = '';
    let tidCounter = 0;

    beforeAll(async () => {
      // One per test, and some to spare.
      const tids = Array.from({ length: 30 }, (_, i) => `TN-${i}`);
      upstream = await startGrowingUpstream({ acct: tids }, { historyEnd });
      test = createTestGateway(upstream.url, { cursorKey: KEY, resilience: { historyEnd } });
      other = createTestGateway(upstream.url, { cursorKey: KEY, resilience: { historyEnd } });
    });
    afterAll(async () => {
      await test.close();
      await other.close();
      await upstream.close();
    });
    // Each test gets a number of its own, 3 + 40 = 43 messages long, and a clean call log.
    beforeEach(() => {
      tid = `TN-${tidCounter++}`;
      upstream.add(tid, 40);
      upstream.calls.length = 0;
    });

    /**
     * The smshistory calls made so far, as the gateway's [start, end) ranges (an inclusive service
     * was sent end - 1, checked below); clears the log.
     */
    function historyCalls(): [number, number][] {
      const ranges = wireCalls().map(([start, end]): [number, number] => [
        start,
        historyEnd === 'inclusive' ? end + 1 : end,
      ]);
      upstream.calls.length = 0;
      return ranges;
    }

    async function page(
      variables: { first?: number; after?: string; last?: number; before?: string },
      gateway: TestGateway = test,
    ) {
      const { body } = await execute(
        gateway.gateway,
        MessagesPageQuery,
        { tid, ...variables },
        auth,
      );
      expect(body.errors).toBeUndefined();
      const connection = body.data?.number?.messages;
      if (!connection) throw new Error('no connection');
      return { ...connection, ids: connection.edges.map((e) => e.node?.id) };
    }

    /** The smshistory calls made so far, as sent: [history_start, history_end]; keeps the log. */
    function wireCalls(): [number, number][] {
      return upstream.calls
        .filter((c) => c.operation === 'smshistory')
        .map((c): [number, number] => [
          Number(c.params.get('history_start')),
          Number(c.params.get('history_end')),
        ]);
    }

    /** The whole history as the service holds it now, newest first (one call, outside the count). */
    async function everything(): Promise<string[]> {
      const { body } = await executeText<{ number: { history: { messages: { id: string }[] } } }>(
        test.gateway,
        `query($tid: ID!) { number(tid: $tid) { history(start: 0, end: 1000) { messages { id } } } }`,
        { tid },
        auth,
      );
      upstream.calls.length = 0;
      return body.data?.number.history.messages.map((m) => m.id) ?? [];
    }

    describe('paging forward', () => {
      it('reads a first page in one call and the next in one more, verifying the cursor', async () => {
        const all = await everything();
        const first = await page({ first: 5 });
        expect(historyCalls()).toEqual([[0, 5]]);
        expect(first.ids).toEqual(all.slice(0, 5));
        expect(first.totalCount).toBe(43);
        expect(first.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });

        const second = await page({ first: 5, after: first.pageInfo.endCursor ?? '' });
        // The window starts at the cursor's own message, to check it is still there.
        expect(historyCalls()).toEqual([[4, 10]]);
        expect(second.ids).toEqual(all.slice(5, 10));
        expect(second.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
      });

      it('leaves no duplicate and no gap when messages arrive between pages, at one extra call', async () => {
        const before = await everything();
        const first = await page({ first: 5 });
        historyCalls();
        upstream.add(tid, 3);
        const second = await page({ first: 5, after: first.pageInfo.endCursor ?? '' });
        // First at the old position (moved: total grew by 3), then at the shifted one.
        expect(historyCalls()).toEqual([
          [4, 10],
          [7, 13],
        ]);
        expect([...first.ids, ...second.ids]).toEqual(before.slice(0, 10));
        expect(second.totalCount).toBe(46);

        // The new cursors carry the new count: the page after needs one call again.
        const third = await page({ first: 5, after: second.pageInfo.endCursor ?? '' });
        expect(historyCalls()).toEqual([[12, 18]]);
        expect(third.ids).toEqual(before.slice(10, 15));
      });

      it('follows the cursor message again when more arrive while it is being found: still a full page', async () => {
        const first = await page({ first: 5 });
        const before = await everything();
        historyCalls();
        upstream.add(tid, 3);
        // Two more arrive while the second read is answered: it sees the message 2 further on.
        let reads = 0;
        upstream.holdHistory(() => {
          reads += 1;
          if (reads !== 2) return null;
          upstream.add(tid, 2);
          return Promise.resolve();
        });
        try {
          const second = await page({ first: 5, after: first.pageInfo.endCursor ?? '' });
          expect(historyCalls()).toEqual([
            [4, 10],
            [7, 13],
            [9, 15],
          ]);
          expect(second.ids).toEqual(before.slice(5, 10));
          expect(second.totalCount).toBe(48);
        } finally {
          upstream.holdHistory(null);
        }
      });

      it('ends with hasNextPage false on the last page', async () => {
        const first = await page({ first: 40 });
        const last = await page({ first: 40, after: first.pageInfo.endCursor ?? '' });
        expect(last.ids).toHaveLength(3);
        expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      });

      it('accepts a cursor issued by another gateway copy that shares the key', async () => {
        const all = await everything();
        const first = await page({ first: 5 });
        const second = await page({ first: 5, after: first.pageInfo.endCursor ?? '' }, other);
        expect(second.ids).toEqual(all.slice(5, 10));
      });
    });

    describe('paging backward', () => {
      it('reads the oldest page (last without before) in two calls: the total, then the window', async () => {
        const all = await everything();
        const oldest = await page({ last: 5 });
        expect(historyCalls()).toEqual([
          [0, 5],
          [38, 43],
        ]);
        expect(oldest.ids).toEqual(all.slice(38));
        expect(oldest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

        const newer = await page({ last: 5, before: oldest.pageInfo.startCursor ?? '' });
        expect(historyCalls()).toEqual([[33, 39]]);
        expect(newer.ids).toEqual(all.slice(33, 38));
      });

      it('pages back towards the head from a forward cursor, also across arrivals', async () => {
        const all = await everything();
        const first = await page({ first: 5 });
        const second = await page({ first: 5, after: first.pageInfo.endCursor ?? '' });
        historyCalls();
        upstream.add(tid, 2);
        const back = await page({ last: 5, before: second.pageInfo.startCursor ?? '' });
        // Cursor message was at 5: window [0, 6) misses it; shifted by 2 it is at 7: window [2, 8).
        expect(historyCalls()).toEqual([
          [0, 6],
          [2, 8],
        ]);
        expect(back.ids).toEqual(all.slice(0, 5));
        // Two newer messages lie before this page now.
        expect(back.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
      });
    });

    describe('refused arguments: BAD_USER_INPUT and no upstream call', () => {
      const cases: [string, () => Record<string, unknown>, RegExp][] = [
        ['negative first', () => ({ first: -1 }), /`first` must be 0 or more/],
        ['negative last', () => ({ last: -2 }), /`last` must be 0 or more/],
        ['first over the maximum', () => ({ first: 101 }), /`first` must be at most 100/],
        ['last over the maximum', () => ({ last: 1000 }), /`last` must be at most 100/],
        // Past MAX_QUERY_COST (100,000) too: still the argument's own refusal, not the cost's.
        [
          'first far over the maximum',
          () => ({ first: 100_000 }),
          /`first` must be at most 100 \(got 100000\)/,
        ],
        [
          'last far over the maximum',
          () => ({ last: 1_000_000 }),
          /`last` must be at most 100 \(got 1000000\)/,
        ],
        ['first and last together', () => ({ first: 1, last: 1 }), /not both/],
        [
          'a malformed cursor',
          () => ({ first: 1, after: 'NQ==' }),
          /not a cursor this gateway issued/,
        ],
        [
          "another number's cursor",
          () => ({
            last: 1,
            before: createCursorCodec(KEY).encode({ tid: 'TN-x', id: 'a', offset: 0, total: 1 }),
          }),
          /another number's messages/,
        ],
      ];
      it.each(cases)('%s', async (_name, variables, message) => {
        const { body } = await executeText<{ number: { messages: unknown } }>(
          test.gateway,
          `query($tid: ID!, $first: Int, $after: String, $last: Int, $before: String) {
          number(tid: $tid) { messages(first: $first, after: $after, last: $last, before: $before) { totalCount } }
        }`,
          { tid, ...variables() },
          auth,
        );
        expect(body.data?.number.messages).toBeNull();
        expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(body.errors?.[0]?.message).toMatch(message);
        expect(upstream.callsOf('smshistory')).toBe(0);
      });
    });

    describe('cursors of another key: RESYNC_REQUIRED, no upstream call; a rotation keeps them', () => {
      const OLD_KEY = 'paging-old-key-'.repeat(3);
      const page = (gateway: TestGateway, after: string) =>
        executeText<{ number: { messages: { edges: { node: { id: string } }[] } | null } }>(
          gateway.gateway,
          `query($tid: ID!, $after: String) {
        number(tid: $tid) { messages(first: 2, after: $after) { edges { node { id } } } }
      }`,
          { tid, after },
          auth,
        );

      it('answers RESYNC_REQUIRED for a well-formed cursor signed with a key it does not have', async () => {
        const after = createCursorCodec('x'.repeat(32)).encode({
          tid,
          id: 'a',
          offset: 0,
          total: 1,
        });
        const { body } = await page(test, after);
        expect(body.data?.number.messages).toBeNull();
        expect(body.errors?.[0]?.extensions?.code).toBe('RESYNC_REQUIRED');
        expect(body.errors?.[0]?.message).toMatch(/signed with a key this gateway no longer has/);
        expect(upstream.callsOf('smshistory')).toBe(0);
      });

      it('a cursor from a gateway with secret A works on one with secret B and previous A', async () => {
        const before = createTestGateway(upstream.url, { cursorKey: OLD_KEY });
        const rotated = createTestGateway(upstream.url, {
          cursorKey: KEY,
          previousCursorKey: OLD_KEY,
        });
        try {
          const first = await executeText<{
            number: {
              messages: { pageInfo: { endCursor: string }; edges: { node: { id: string } }[] };
            };
          }>(
            before.gateway,
            `query($tid: ID!) { number(tid: $tid) { messages(first: 2) { pageInfo { endCursor } edges { node { id } } } } }`,
            { tid },
            auth,
          );
          const cursor = first.body.data?.number.messages.pageInfo.endCursor ?? '';
          const onRotated = await page(rotated, cursor);
          expect(onRotated.body.errors).toBeUndefined();
          expect(onRotated.body.data?.number.messages?.edges).toHaveLength(2);
          // Without the previous key (the rotation finished too early) the same cursor is RESYNC_REQUIRED.
          const onCurrentOnly = await page(test, cursor);
          expect(onCurrentOnly.body.errors?.[0]?.extensions?.code).toBe('RESYNC_REQUIRED');
        } finally {
          await before.close();
          await rotated.close();
        }
      });
    });

    describe('the service is sent its own reading of the end', () => {
      it('asks for [start, end) as history_end = end, or end - 1 when the service reads it inclusively', async () => {
        await page({ first: 5 });
        expect(wireCalls()).toEqual(historyEnd === 'inclusive' ? [[0, 4]] : [[0, 5]]);
      });

      it('pages through the whole history, arrivals included, with no duplicate and no gap', async () => {
        const before = await everything();
        const seen: (string | undefined)[] = [];
        let after: string | undefined;
        for (let round = 0; round < 20; round += 1) {
          const next = await page({ first: 7, ...(after ? { after } : {}) });
          seen.push(...next.ids);
          if (round === 2) upstream.add(tid, 4);
          if (!next.pageInfo.hasNextPage) break;
          after = next.pageInfo.endCursor ?? undefined;
        }
        expect(seen).toEqual(before);
      });

      it('an empty history(start, end) still serves the counts, without a message', async () => {
        const { body } = await executeText<{
          number: { history: { totalCount: number; requestedCount: number; messages: unknown[] } };
        }>(
          test.gateway,
          `query($tid: ID!) { number(tid: $tid) { history(start: 2, end: 2) { totalCount requestedCount messages { id } } } }`,
          { tid },
          auth,
        );
        expect(body.data?.number.history).toEqual({
          totalCount: 43,
          requestedCount: 0,
          messages: [],
        });
        // Never a reversed range: an inclusive service is asked for the one message at 2.
        expect(wireCalls()).toEqual([[2, 2]]);
      });
    });

    describe('range coalescing', () => {
      it('serves history(0,10), history(5,20) and messages(first: 15) from ONE call for 0..20', async () => {
        const all = await everything();
        const { body } = await execute(test.gateway, CoalescedRangesQuery, { tid }, auth);
        expect(body.errors).toBeUndefined();
        expect(historyCalls()).toEqual([[0, 20]]);
        const number = body.data?.number;
        expect(number?.a?.messages.map((m) => m?.id)).toEqual(all.slice(0, 10));
        expect(number?.a?.requestedCount).toBe(10);
        expect(number?.b?.messages.map((m) => m?.id)).toEqual(all.slice(5, 20));
        expect(number?.b?.requestedCount).toBe(15);
        expect(number?.page?.edges.map((e) => e.node?.id)).toEqual(all.slice(0, 15));
        expect(number?.page?.totalCount).toBe(43);
      });

      it('counts a connection at its page size: first or last, 20 with neither', async () => {
        const tight = createTestGateway(upstream.url, { limits: { maxCost: 60 } });
        try {
          const query = (args: string) => `query($tid: ID!) { number(tid: $tid) { ${args} } }`;
          // 1 number + 1 connection + 20 edges and their 20 nodes.
          const ok = await executeText(
            tight.gateway,
            query('messages { edges { node { id } } }'),
            { tid },
            auth,
          );
          expect(ok.status).toBe(200);
          expect(ok.body.errors).toBeUndefined();
          const refused = await executeText(
            tight.gateway,
            query('messages(last: 30) { edges { node { id } } }'),
            { tid },
            auth,
          );
          expect(refused.status).toBe(400);
          expect(refused.body.errors?.[0]?.message).toMatch(
            /cost limit of 60 exceeded: this operation may return or fetch 62 items .*: MessageConnection\.edges 30, MessageEdge\.node 30/,
          );
        } finally {
          await tight.close();
        }
      });
    });
  },
);

describe('a gateway told `exclusive` in front of a service that reads the end inclusively', () => {
  it('still pages exactly: the one message too many in each answer is cut', async () => {
    const upstream = await startGrowingUpstream({ acct: ['TN-x'] }, { historyEnd: 'inclusive' });
    const test = createTestGateway(upstream.url, { cursorKey: KEY });
    try {
      upstream.add('TN-x', 20);
      const seen: (string | undefined)[] = [];
      let after: string | undefined;
      for (let round = 0; round < 10; round += 1) {
        const { body } = await execute(
          test.gateway,
          MessagesPageQuery,
          { tid: 'TN-x', first: 5, ...(after ? { after } : {}) },
          auth,
        );
        const connection = body.data?.number?.messages;
        seen.push(...(connection?.edges.map((e) => e.node?.id) ?? []));
        if (!connection?.pageInfo.hasNextPage) break;
        after = connection.pageInfo.endCursor ?? undefined;
      }
      expect(seen).toHaveLength(23);
      expect(new Set(seen).size).toBe(23);
    } finally {
      await test.close();
      await upstream.close();
    }
  });
});
