/**
 * Paging as real clients do it, against the gateway (in-process) and a loopback upstream whose
 * history grows between the two page requests: Apollo Client's relayStylePagination and urql
 * graphcache's relayPagination each merge the pages with no duplicate and no gap.
 */
import { InMemoryCache } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { parse, print } from 'graphql';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apolloClient, urqlClient } from '../fixtures/frontend-clients.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import { MessagesPageQuery } from '../fixtures/operations.js';

// A plain string (parsed here), as a frontend's own documents would be: the page query the
// gateway's own paging tests send.
const MESSAGES = print(MessagesPageQuery);

interface MessagesData {
  number: {
    messages: {
      totalCount: number;
      edges: { cursor: string; node: { id: string } }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
  };
}

const headers = { 'x-sys-id': 'acct', 'x-auth-token': 'tok-acct' };
let upstream: GrowingUpstream;
let test: TestGateway;

beforeAll(async () => {
  upstream = await startGrowingUpstream({ acct: ['TN-APOLLO', 'TN-URQL'] });
  test = createTestGateway(upstream.url);
});
afterAll(async () => {
  await test.close();
  await upstream.close();
});

/** The history newest first, as ids; read before any arrival. */
function idsOf(data: MessagesData | undefined): string[] {
  return data?.number.messages.edges.map((e) => e.node.id) ?? [];
}

describe('Apollo Client relayStylePagination', () => {
  it('merges two pages with fetchMore, and an arrival between them leaves no duplicate', async () => {
    const tid = 'TN-APOLLO';
    upstream.add(tid, 20); // 23 messages, newest first
    const client = apolloClient(
      test.gateway,
      headers,
      new InMemoryCache({
        typePolicies: {
          Number: { keyFields: ['tid'], fields: { messages: relayStylePagination() } },
        },
      }),
    );
    const query = parse(MESSAGES);
    const observable = client.watchQuery<MessagesData>({ query, variables: { tid, first: 5 } });
    const first = await firstValueFrom(observable.pipe(filter((r) => r.dataState === 'complete')));
    const page1 = idsOf(first.data as MessagesData);
    expect(page1).toHaveLength(5);

    const arrived = upstream.add(tid, 2);
    const endCursor = (first.data as MessagesData).number.messages.pageInfo.endCursor;
    await observable.fetchMore({ variables: { after: endCursor } });
    const merged = observable.getCurrentResult().data as MessagesData;
    const ids = idsOf(merged);
    expect(ids).toHaveLength(10);
    expect(new Set(ids).size).toBe(10);
    expect(ids.slice(0, 5)).toEqual(page1);
    expect(ids.some((id) => arrived.includes(id))).toBe(false);
    // The second page continues right after the first: in the service's order, no gap.
    const now = await client.query<MessagesData>({
      query: parse(MESSAGES.replace('query MessagesPage', 'query All')),
      variables: { tid, first: 30 },
      fetchPolicy: 'network-only',
    });
    const all = idsOf(now.data).filter((id) => !arrived.includes(id));
    expect(ids).toEqual(all.slice(0, 10));
    client.stop();
  });
});

describe('urql graphcache relayPagination', () => {
  it('merges the pages of two queries, and an arrival between them leaves no duplicate', async () => {
    const tid = 'TN-URQL';
    upstream.add(tid, 20);
    const client = urqlClient(test.gateway, headers, {
      keys: {
        Number: (n) => (n.tid as string | undefined) ?? null,
        MessageConnection: () => null,
        MessageEdge: () => null,
        PageInfo: () => null,
      },
      resolvers: { Number: { messages: relayPagination() } },
    });
    const first = await client.query<MessagesData>(MESSAGES, { tid, first: 5 }).toPromise();
    expect(first.error).toBeUndefined();
    const page1 = idsOf(first.data);
    expect(page1).toHaveLength(5);

    const arrived = upstream.add(tid, 3);
    const after = first.data?.number.messages.pageInfo.endCursor;
    const second = await client.query<MessagesData>(MESSAGES, { tid, first: 5, after }).toPromise();
    expect(second.error).toBeUndefined();
    const ids = idsOf(second.data);
    expect(ids).toHaveLength(10);
    expect(new Set(ids).size).toBe(10);
    expect(ids.slice(0, 5)).toEqual(page1);
    expect(ids.some((id) => arrived.includes(id))).toBe(false);
    expect(second.data?.number.messages.totalCount).toBe(26);
  });
});
