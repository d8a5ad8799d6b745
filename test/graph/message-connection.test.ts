/**
 * Number.messages (src/graph/message-connection.ts) resolved through the schema over a stubbed
 * history: each window is read as `[start, end)` of the number, the page is planned under the
 * request's limits, and an unreadable record keeps its edge and cursor with a null node and its
 * own error at that node's path.
 */
import { execute, parse, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/config.js';
import type { History, HistoryRequest, Message, MessageRecord } from '../../src/core/domain.js';
import { UpstreamError } from '../../src/core/errors.js';
import { createCursorCodec } from '../../src/graph/cursors.js';
import { schema } from '../../src/graph/schema.js';

const codec = createCursorCodec('message-connection-test-key');
const NUMBER = { tid: 'T-A', number: '15550000001', type: 'LOCAL', webhook: null } as const;

const message = (i: number): Message => ({
  id: String(i).padStart(32, '0'),
  systemId: String(i),
  sentAt: new Date(Date.UTC(2026, 0, i)),
  tid: 'T-A',
  phone: '15550000000',
  direction: 'INBOUND',
  body: `message ${i}`,
  mms: false,
  mediaUrl: null,
  status: { code: 200, text: 'ok', ok: true, raw: '200 ok' },
});

/** A history of 5, newest first; position 1 could not be read. */
const RECORDS: MessageRecord[] = [
  message(5),
  {
    unreadable: true,
    id: 'b'.repeat(32),
    error: new UpstreamError('UPSTREAM_ERROR', 'record 1 is bad'),
  },
  message(3),
  message(2),
  message(1),
];

async function messages(args: string, maxHistoryRange = DEFAULT_LIMITS.maxHistoryRange) {
  const reads: HistoryRequest[] = [];
  const history = (request: HistoryRequest): Promise<History> => {
    reads.push(request);
    return Promise.resolve({
      tid: 'T-A',
      number: NUMBER.number,
      requestedCount: request.end - request.start,
      totalCount: RECORDS.length,
      createdAt: null,
      mostRecentMessageId: null,
      mostRecentAt: null,
      optIn: null,
      messages: RECORDS.slice(request.start, request.end),
    });
  };
  const loaders = { numberByTid: () => Promise.resolve(NUMBER), history };
  const result = (await execute({
    schema,
    document: parse(
      `{ number(tid: "T-A") { messages${args} { totalCount edges { cursor node { body } } pageInfo { hasNextPage } } } }`,
    ),
    contextValue: {
      cursors: codec,
      limits: { ...DEFAULT_LIMITS, maxHistoryRange },
      upstream: () => loaders,
      account: () => ({ credentials: { sysId: 'S-A', authToken: 'secret' }, loaders }),
    },
  })) as ExecutionResult<{
    number: {
      messages: {
        totalCount: number;
        edges: { cursor: string; node: { body: string } | null }[];
        pageInfo: { hasNextPage: boolean };
      } | null;
    };
  }>;
  return { result, reads };
}

describe('Number.messages', () => {
  it('reads the page from its number, keeping an unreadable record as an edge with a null node and its error', async () => {
    const { result, reads } = await messages('(first: 3)');
    expect(reads).toEqual([{ tid: 'T-A', number: NUMBER.number, start: 0, end: 3 }]);
    const page = result.data?.number.messages;
    expect(page?.totalCount).toBe(5);
    expect(page?.pageInfo.hasNextPage).toBe(true);
    expect(page?.edges.map((edge) => edge.node?.body ?? null)).toEqual([
      'message 5',
      null,
      'message 3',
    ]);
    expect(codec.decode(page!.edges[1]!.cursor).cursor).toEqual({
      tid: 'T-A',
      id: 'b'.repeat(32),
      offset: 1,
      total: 5,
      // The next page's number, for this account only (test/graph/number-from-cursor.test.ts).
      owner: { number: NUMBER.number, account: codec.accountTag('S-A') },
    });
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.message).toBe('record 1 is bad');
    expect(result.errors?.[0]?.path).toEqual(['number', 'messages', 'edges', 1, 'node']);
  });

  it('refuses a page larger than the limits allow, before any read', async () => {
    const { result, reads } = await messages('(first: 4)', 3);
    expect(reads).toEqual([]);
    expect(result.data?.number.messages).toBeNull();
    expect(result.errors?.[0]?.message).toBe('messages: `first` must be at most 3 (got 4)');
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
