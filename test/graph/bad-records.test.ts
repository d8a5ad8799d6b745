/**
 * One unreadable message record among good ones, from a real loopback service: only that record
 * fails (a null item, or a null edge node, with UPSTREAM_ERROR at its path); the other messages,
 * the counts and the paging cursors arrive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  basicAuth,
  createTestGateway,
  executeText,
  type TestGateway,
} from '../fixtures/harness.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../support/scripted-upstream.js';

const auth = basicAuth({ sysId: 'AC-1', authToken: 'token-1' });

function record(id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    system_id: 1,
    message_id: id,
    GMTdate: '2026-03-04 05:06:07',
    tid: 'TN-1',
    phone: '15551230123',
    direction: 'outbound',
    body: `body ${id}`,
    mms: 'no',
    mms_url: '',
    status: '200 Message delivered',
    ...overrides,
  };
}

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const E = 'e'.repeat(32);
// Positions: 0 good, 1 unreadable timestamp, 2 not an object, 3 no message_id, 4 good.
const RECORDS: unknown[] = [
  record(A),
  record(B, { GMTdate: 'soon' }),
  7,
  record('', { message_id: undefined }),
  record(E),
];

let upstream: ScriptedUpstream;
let test: TestGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream((call) => {
    if (call.operation === 'smshistory') {
      const start = Number(call.params.get('history_start'));
      const end = Number(call.params.get('history_end'));
      return {
        json: {
          success: '1',
          'message_count_requested ': end - start,
          total_message_count: RECORDS.length,
          tid: 'TN-1',
          number: '15125550101',
          messages: RECORDS.slice(start, end),
        },
      };
    }
    return {
      json: {
        success: '1',
        data: [{ number: '15125550101', tid: 'TN-1', type: 'local', webhook: '' }],
      },
    };
  });
  test = createTestGateway(upstream.url);
});
afterAll(async () => {
  await test.close();
  await upstream.close();
});

interface Answer {
  data: {
    number: {
      history: { totalCount: number; messages: ({ id: string; sentAt: string } | null)[] } | null;
      messages: {
        totalCount: number;
        edges: { cursor: string; node: { id: string } | null }[];
        pageInfo: { endCursor: string | null; hasNextPage: boolean };
      } | null;
    } | null;
  };
  errors?: { message: string; path: (string | number)[]; extensions: { code: string } }[];
}

async function ask(query: string): Promise<Answer> {
  const { body } = await executeText(test.gateway, query, undefined, auth);
  return body as unknown as Answer;
}

describe('an unreadable message record', () => {
  it('history: null at its index with UPSTREAM_ERROR there; the good messages and totalCount arrive', async () => {
    const answer = await ask(
      '{ number(tid: "TN-1") { history(start: 0, end: 5) { totalCount messages { id sentAt } } } }',
    );
    const history = answer.data.number?.history;
    expect(history?.totalCount).toBe(5);
    expect(history?.messages).toEqual([
      { id: A, sentAt: '2026-03-04T05:06:07.000Z' },
      null,
      null,
      null,
      { id: E, sentAt: '2026-03-04T05:06:07.000Z' },
    ]);
    const errors = answer.errors ?? [];
    expect(errors.map((e) => e.path)).toEqual(
      [1, 2, 3].map((i) => ['number', 'history', 'messages', i]),
    );
    expect(errors.every((e) => e.extensions.code === 'UPSTREAM_ERROR')).toBe(true);
    expect(errors[0]?.message).toContain('`messages[1].GMTdate`');
    expect(errors[1]?.message).toContain('`messages[2]` should be an object');
    expect(errors[2]?.message).toContain('`messages[3].message_id`');
  });

  it('messages: the edge and its cursor stay, only its node is null, and paging goes on past it', async () => {
    const first = await ask(
      '{ number(tid: "TN-1") { messages(first: 2) { totalCount edges { cursor node { id } } pageInfo { endCursor hasNextPage } } } }',
    );
    const page = first.data.number?.messages;
    expect(page?.totalCount).toBe(5);
    expect(page?.edges.map((e) => e.node?.id ?? null)).toEqual([A, null]);
    expect(page?.edges.every((e) => e.cursor.length > 0)).toBe(true);
    expect(first.errors?.map((e) => [e.path, e.extensions.code])).toEqual([
      [['number', 'messages', 'edges', 1, 'node'], 'UPSTREAM_ERROR'],
    ]);
    const next = await ask(
      `{ number(tid: "TN-1") { messages(first: 3, after: ${JSON.stringify(page?.pageInfo.endCursor)}) { totalCount edges { cursor node { id } } pageInfo { endCursor hasNextPage } } } }`,
    );
    expect(next.data.number?.messages?.edges.map((e) => e.node?.id ?? null)).toEqual([
      null,
      null,
      E,
    ]);
    expect(next.data.number?.messages?.pageInfo.hasNextPage).toBe(false);
    expect(next.errors?.map((e) => e.path)).toEqual([
      ['number', 'messages', 'edges', 0, 'node'],
      ['number', 'messages', 'edges', 1, 'node'],
    ]);
  });

  it('the same when graphql-js executes (a @defer document is not compiled by graphql-jit)', async () => {
    const { body } = await executeText(
      test.gateway,
      '{ number(tid: "TN-1") { ... @defer { history(start: 0, end: 2) { totalCount messages { id } } } } }',
      undefined,
      { ...auth, accept: 'application/json' },
    );
    expect(body.data).toEqual({
      number: { history: { totalCount: 5, messages: [{ id: A }, null] } },
    });
    expect(body.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['number', 'history', 'messages', 1], 'UPSTREAM_ERROR'],
    ]);
  });
});
