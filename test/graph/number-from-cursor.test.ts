/**
 * One upstream call per page after the first (numberFromCursor in src/graph/numbers.ts): through the gateway,
 * counting the simulator's calls, paging a number to the end costs pages + 1 calls; a cursor of an
 * older gateway (no owner), another account's cursor, refused credentials and a selection that
 * needs more than the cursor knows all get the owned-numbers lookup's answer, as before.
 */
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/graph/cursors.js';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  SECOND_DEMO_CREDENTIALS,
} from '../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../fixtures/harness.js';

const KEY = 'number-from-cursor-test-key-0123456789ab';
const stack = sharedStack({}, { cursorKey: KEY }, { resetCalls: true });
const auth = basicAuth(DEMO_CREDENTIALS);
/** 64 messages: pages of 10 read it in 7. */
const NUMBER = DEMO_ACCOUNT.numbers.find((n) => n.tid === 'TN-T-0002')!;

const PAGE = `
  query Page($tid: ID!, $after: String) {
    number(tid: $tid) {
      id
      tid
      number
      messages(first: 10, after: $after) {
        totalCount
        edges { cursor node { id } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
`;

interface PageData {
  number: {
    number: string;
    type?: string;
    messages: {
      totalCount: number;
      edges: { cursor: string; node: { id: string } }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    } | null;
  } | null;
}

const page = (after: string | null, headers = auth, query = PAGE) =>
  executeText<PageData>(stack.gateway, query, { tid: NUMBER.tid, after }, headers);

/** The end cursor of the number's first page; the calls counted from after it. */
async function firstPageEnd(): Promise<string | null> {
  const { body } = await page(null);
  stack.simulator.resetCalls();
  return body.data!.number!.messages!.pageInfo.endCursor;
}

const calls = (operation: string) =>
  stack.simulator.calls.filter((call) => call.operation === operation).length;

describe('number(tid) { messages(after:) }: one call per page after the first', () => {
  it('pages a number to the end with pages + 1 calls, every message once', async () => {
    const ids: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const { body } = await page(after);
      expect(body.errors).toBeUndefined();
      const messages = body.data!.number!.messages!;
      expect(body.data!.number!.number).toBe(NUMBER.number);
      ids.push(...messages.edges.map((e) => e.node.id));
      pages += 1;
      if (!messages.pageInfo.hasNextPage) break;
      after = messages.pageInfo.endCursor;
    }
    expect(pages).toBe(7);
    expect(ids).toEqual(NUMBER.messages.map((m) => m.message_id));
    expect(calls('allownednumbers')).toBe(1);
    expect(calls('smshistory')).toBe(pages);
    expect(stack.simulator.calls).toHaveLength(pages + 1);
  });

  it('pages back towards newer messages (`last`, `before`) with one call too', async () => {
    const first = await page(null);
    const second = await page(first.body.data!.number!.messages!.pageInfo.endCursor);
    const cursor = second.body.data!.number!.messages!.edges[0]!.cursor;
    stack.simulator.resetCalls();
    const BEFORE = PAGE.replace('$after: String', '$before: String').replace(
      'first: 10, after: $after',
      'last: 5, before: $before',
    );

    const { body } = await executeText<PageData>(
      stack.gateway,
      BEFORE,
      { tid: NUMBER.tid, before: cursor },
      auth,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data!.number!.messages!.edges.map((e) => e.node.id)).toEqual(
      NUMBER.messages.slice(5, 10).map((m) => m.message_id),
    );
    expect(stack.simulator.calls.map((call) => call.operation)).toEqual(['smshistory']);
  });

  it('still accepts a cursor issued without its number, looking the number up', async () => {
    const { body } = await page(null);
    const fifth = body.data!.number!.messages!.edges[4]!;
    const total = body.data!.number!.messages!.totalCount;
    // As a gateway before owners wrote them: the same key, no owner.
    const older = createCursorCodec(KEY).encode({
      tid: NUMBER.tid,
      id: fifth.node.id,
      offset: 4,
      total,
    });
    stack.simulator.resetCalls();
    const next = await page(older);
    expect(next.body.errors).toBeUndefined();
    expect(next.body.data!.number!.messages!.edges.map((e) => e.node.id)).toEqual(
      NUMBER.messages.slice(5, 15).map((m) => m.message_id),
    );
    expect(calls('allownednumbers')).toBe(1);
    expect(calls('smshistory')).toBe(1);
  });

  it("gives another account nothing for this account's cursor: the lookup answers null", async () => {
    const cursor = await firstPageEnd();
    const other = await page(cursor, basicAuth(SECOND_DEMO_CREDENTIALS));
    expect(other.body.data?.number).toBeNull();
    // Its own list was read; no history of the number the cursor names.
    expect(calls('allownednumbers')).toBe(1);
    expect(calls('smshistory')).toBe(0);
  });

  it('refuses refused credentials (a revoked account) a page after the first: no data', async () => {
    const cursor = await firstPageEnd();
    // The same account, as the service sees it once the token is revoked.
    const revoked = basicAuth({ ...DEMO_CREDENTIALS, authToken: 'revoked-token' });
    const refused = await page(cursor, revoked);
    expect(refused.body.data?.number ?? null).toBeNull();
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(JSON.stringify(refused.body)).not.toContain(NUMBER.messages[10]!.message_id);
    // Each call the gateway made was refused by the service.
    expect(stack.simulator.calls.every((call) => call.status === 401)).toBe(true);
  });

  it('looks the number up when the selection needs more than the cursor knows', async () => {
    const cursor = await firstPageEnd();
    const withType = PAGE.replace('tid\n      number', 'tid\n      number\n      type');
    const next = await page(cursor, auth, withType);
    expect(next.body.errors).toBeUndefined();
    expect(next.body.data!.number!.type).toBe('TOLLFREE');
    expect(calls('allownednumbers')).toBe(1);
    expect(calls('smshistory')).toBe(1);
  });

  it('looks the number up when a page is read with a cursor of another number', async () => {
    const cursor = await firstPageEnd();
    const other = DEMO_ACCOUNT.numbers.find((n) => n.tid === 'TN-L-0001')!;
    const refused = await executeText<PageData>(
      stack.gateway,
      PAGE,
      { tid: other.tid, after: cursor },
      auth,
    );
    expect(refused.body.data!.number!.messages).toBeNull();
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(calls('smshistory')).toBe(0);
  });
});
