/**
 * The cache setups of docs/client-caching.md, against the gateway in-process and the simulator:
 * with default keys (`id`), urql Graphcache and Apollo Client normalise Number and Message with
 * no warning, History and the other id-less types are embedded, and a `node(id)` refetch lands
 * on the same cache record as the list.
 */
import { InMemoryCache, gql } from '@apollo/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { apolloClient, urqlClient } from '../fixtures/frontend-clients.js';
import { basicAuth, sharedStack } from '../fixtures/harness.js';

const stack = sharedStack();

const headers = basicAuth(DEMO_CREDENTIALS);

const NUMBERS = `
  query Numbers {
    ownedNumbers {
      id
      tid
      number
      history(start: 0, end: 3) {
        tid
        totalCount
        mostRecentSystemId
        messages { id systemId body status { code ok } }
      }
      messages(first: 2) { totalCount edges { cursor node { id body } } pageInfo { hasNextPage endCursor } }
    }
  }
`;
const NODE = `query Refetch($id: ID!) { node(id: $id) { id ... on Number { number } } }`;

interface NumbersData {
  ownedNumbers: { id: string; tid: string; number: string }[];
}

let warnings: string[];
beforeEach(() => {
  warnings = [];
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    warnings.push(args.map(String).join(' '));
  });
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    warnings.push(args.map(String).join(' '));
  });
});
afterEach(() => vi.restoreAllMocks());

describe('urql Graphcache with default keys', () => {
  it('normalises Number and Message by id, embeds History, and warns about nothing', async () => {
    const client = urqlClient(stack.gateway, headers, {
      // The types without an id are values inside their parent, not entities.
      keys: {
        History: () => null,
        MessageStatus: () => null,
        MessageConnection: () => null,
        MessageEdge: () => null,
        PageInfo: () => null,
      },
    });
    const list = await client.query<NumbersData>(NUMBERS, {}).toPromise();
    expect(list.error).toBeUndefined();
    const first = list.data?.ownedNumbers[0];
    expect(first?.id).toBeTruthy();

    const refetched = await client
      .query<{ node: { id: string; number: string } }>(NODE, { id: first?.id })
      .toPromise();
    expect(refetched.error).toBeUndefined();
    expect(refetched.data?.node).toMatchObject({ id: first?.id, number: first?.number });
    expect(warnings.filter((w) => /Invalid key|Heuristic|Invalid undefined/i.test(w))).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('would warn without the History rule (the check above can fail)', async () => {
    const client = urqlClient(stack.gateway, headers);
    await client.query(NUMBERS, {}).toPromise();
    expect(warnings.some((w) => w.includes('Invalid key') && w.includes('History'))).toBe(true);
  });
});

describe('Apollo Client with default keys', () => {
  it('identifies Number by id: the list and node(id) share one record, with no warning', async () => {
    const cache = new InMemoryCache();
    const client = apolloClient(stack.gateway, headers, cache);
    const list = await client.query<NumbersData>({ query: gql(NUMBERS) });
    const first = list.data?.ownedNumbers[0];
    const key = cache.identify({ __typename: 'Number', id: first?.id });
    expect(key).toBe(`Number:${first?.id}`);
    expect(cache.extract()[key ?? '']).toMatchObject({ tid: first?.tid });

    const refetched = await client.query<{ node: { id: string; number: string } }>({
      query: gql(NODE),
      variables: { id: first?.id },
    });
    expect(refetched.data?.node).toMatchObject({ id: first?.id, number: first?.number });
    expect(Object.keys(cache.extract()).filter((k) => k.startsWith('Number:'))).toHaveLength(
      list.data?.ownedNumbers.length ?? 0,
    );
    expect(warnings).toEqual([]);
  });
});
