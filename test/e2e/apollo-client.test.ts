/**
 * A frontend's view: Apollo Client 4 (core, no React) against the real gateway process with the
 * built-in simulator, set up as the README's "From a frontend" snippet sets it up: credentials on
 * the link, `Number` normalised by `tid`, incremental delivery for @defer.
 */
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { createPersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS, type DemoNumber } from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';

// Every simulator answer waits this long, so the deferred histories land well after the list
// (they are only asked for once the list is in) and arrive as separate parts.
const SIMULATOR_LATENCY_MS = 150;

let gateway: GatewayProcess;
beforeAll(async () => {
  gateway = await startGatewayProcess({ SIMULATOR_LATENCY_MS: String(SIMULATOR_LATENCY_MS) });
});
afterAll(async () => {
  await gateway.close();
});

/** The README's cache: `Number` has no `id`; its key is `tid`. */
function createCache(): InMemoryCache {
  return new InMemoryCache({ typePolicies: { Number: { keyFields: ['tid'] } } });
}

/** The README's client, with the signed-in user's credentials (or none). */
function createClient(
  credentials: { sysId: string; authToken: string } | null,
  cache: InMemoryCache = createCache(),
): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({
      uri: gateway.endpoint,
      headers: credentials
        ? { Authorization: `Basic ${btoa(`${credentials.sysId}:${credentials.authToken}`)}` }
        : {},
    }),
    cache,
    incrementalHandler: new Defer20220824Handler(),
  });
}

const NUMBERS_WITH_LATEST = gql`
  query NumbersWithLatest {
    ownedNumbers {
      tid
      number
      type
      webhook
      history(start: 0, end: 2) {
        totalCount
        messages {
          id
          body
          direction
        }
      }
    }
  }
`;

function expectedNumber(n: DemoNumber) {
  return {
    __typename: 'Number',
    tid: n.tid,
    number: n.number,
    type: n.type.toUpperCase(),
    // Demo mode sets each number's webhook to its doorbell (docs/live-updates.md "The doorbell").
    webhook: doorbellOf(n.tid),
  };
}

const doorbellOf = (tid: string) =>
  expect.stringMatching(new RegExp(`/hooks/ring/${tid}/[\\w-]+$`));

function expectedHistory(n: DemoNumber, start: number, end: number) {
  return {
    __typename: 'History',
    totalCount: n.messages.length,
    messages: n.messages.slice(start, end).map((m) => ({
      __typename: 'Message',
      id: m.message_id,
      body: m.body,
      direction: m.direction.toUpperCase(),
    })),
  };
}

function numberKey(tid: string): string {
  return `Number:${JSON.stringify({ tid })}`;
}

describe('Apollo Client against the running gateway', () => {
  it('answers a query with the demo account, credentials sent on the link', async () => {
    const client = createClient(DEMO_CREDENTIALS);
    const result = await client.query({ query: NUMBERS_WITH_LATEST });
    expect(result.error).toBeUndefined();
    expect(result.data).toEqual({
      ownedNumbers: DEMO_ACCOUNT.numbers.map((n) => ({
        ...expectedNumber(n),
        history: expectedHistory(n, 0, 2),
      })),
    });
  });

  it('normalises Number by tid: the list and number(tid:) share one cache record', async () => {
    const cache = createCache();
    const client = createClient(DEMO_CREDENTIALS, cache);
    await client.query({ query: NUMBERS_WITH_LATEST });
    const target = DEMO_ACCOUNT.numbers[3];
    if (!target) throw new Error('the demo account has fewer than 4 numbers');
    await client.query({
      query: gql`
        query OneNumber($tid: ID!) {
          number(tid: $tid) {
            tid
            number
          }
        }
      `,
      variables: { tid: target.tid },
    });

    const cached = cache.extract();
    expect(Object.keys(cached).filter((key) => key.startsWith('Number:'))).toEqual(
      DEMO_ACCOUNT.numbers.map((n) => numberKey(n.tid)),
    );
    expect(cached.ROOT_QUERY?.ownedNumbers).toEqual(
      DEMO_ACCOUNT.numbers.map((n) => ({ __ref: numberKey(n.tid) })),
    );
    expect(cached.ROOT_QUERY?.[`number(${JSON.stringify({ tid: target.tid })})`]).toEqual({
      __ref: numberKey(target.tid),
    });
    expect(cache.identify({ __typename: 'Number', tid: target.tid })).toBe(numberKey(target.tid));

    // An update to that one record shows in the list a component rendered earlier.
    cache.modify({
      id: numberKey(target.tid),
      fields: { webhook: () => 'https://hooks.example.com/changed' },
    });
    const list = client.readQuery<{ ownedNumbers: { tid: string; webhook: string | null }[] }>({
      query: NUMBERS_WITH_LATEST,
    });
    expect(list?.ownedNumbers.map((n) => n.webhook)).toEqual(
      DEMO_ACCOUNT.numbers.map((n) =>
        n.tid === target.tid ? 'https://hooks.example.com/changed' : doorbellOf(n.tid),
      ),
    );
  });

  it('no credentials: the query rejects with CombinedGraphQLErrors, code UNAUTHENTICATED', async () => {
    const client = createClient(null);
    const error: unknown = await client
      .query({
        query: gql`
          query Owned {
            ownedNumbers {
              tid
            }
          }
        `,
      })
      .then(
        () => new Error('the query resolved without credentials'),
        (rejection: unknown) => rejection,
      );
    expect(CombinedGraphQLErrors.is(error)).toBe(true);
    if (!CombinedGraphQLErrors.is(error)) return;
    expect(error.errors.map((e) => ({ path: e.path, code: e.extensions?.code }))).toEqual([
      { path: ['ownedNumbers'], code: 'UNAUTHENTICATED' },
    ]);
    expect(error.data).toEqual({ ownedNumbers: null });
  });

  it("errorPolicy 'all': a reversed history range gives partial data and BAD_USER_INPUT", async () => {
    const client = createClient(DEMO_CREDENTIALS);
    const target = DEMO_ACCOUNT.numbers[0];
    if (!target) throw new Error('the demo account has no numbers');
    const result = await client.query({
      query: gql`
        query ReversedRange($tid: ID!) {
          number(tid: $tid) {
            tid
            number
            history(start: 3, end: 1) {
              totalCount
            }
          }
        }
      `,
      variables: { tid: target.tid },
      errorPolicy: 'all',
    });
    expect(result.data).toEqual({
      number: { __typename: 'Number', tid: target.tid, number: target.number, history: null },
    });
    expect(CombinedGraphQLErrors.is(result.error)).toBe(true);
    if (!CombinedGraphQLErrors.is(result.error)) return;
    expect(
      result.error.errors.map((e) => ({
        message: e.message,
        path: e.path,
        code: e.extensions?.code,
      })),
    ).toEqual([
      {
        message: 'history: end (1) must not be less than start (3)',
        path: ['number', 'history'],
        code: 'BAD_USER_INPUT',
      },
    ]);
  });

  it('@defer: the watcher sees the number list first, then the histories as they land', async () => {
    const client = createClient(DEMO_CREDENTIALS);
    const observable = client.watchQuery({
      query: gql`
        query NumbersThenHistories {
          ownedNumbers {
            tid
            number
            ... @defer {
              history(start: 0, end: 1) {
                totalCount
                messages {
                  id
                  body
                  direction
                }
              }
            }
          }
        }
      `,
    });
    const emissions: { dataState: string; data: unknown }[] = [];
    await new Promise<void>((resolve, reject) => {
      const subscription = observable.subscribe({
        next: (result) => {
          if (result.error) reject(result.error);
          if (result.dataState === 'empty') return; // the initial loading state
          emissions.push({ dataState: result.dataState, data: result.data });
          if (result.dataState === 'complete') {
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });

    // A number as the list names it, before its deferred history lands.
    const listed = (n: DemoNumber) => ({ __typename: 'Number', tid: n.tid, number: n.number });
    const first = emissions[0];
    const last = emissions.at(-1);
    expect(first?.dataState).toBe('streaming');
    expect(first?.data).toEqual({ ownedNumbers: DEMO_ACCOUNT.numbers.map(listed) });
    expect(emissions.slice(1, -1).every((e) => e.dataState === 'streaming')).toBe(true);
    expect(last?.dataState).toBe('complete');
    expect(last?.data).toEqual({
      ownedNumbers: DEMO_ACCOUNT.numbers.map((n) => ({
        ...listed(n),
        history: expectedHistory(n, 0, 1),
      })),
    });
  });
});

describe('plain fetch against the running gateway', () => {
  /** The README's fetch snippet. */
  async function ask(tid: string, start: number, end: number): Promise<[number, unknown]> {
    const response = await fetch(gateway.endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Basic ${btoa(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`)}`,
      },
      body: JSON.stringify({
        query: `query NumberHistory($tid: ID!, $start: Int!, $end: Int!) {
          number(tid: $tid) { tid number history(start: $start, end: $end) { totalCount messages { id body } } }
        }`,
        variables: { tid, start, end },
      }),
    });
    return [response.status, await response.json()];
  }

  it('gets the data, and field errors next to the rest of the answer', async () => {
    const target = DEMO_ACCOUNT.numbers[1];
    if (!target) throw new Error('the demo account has fewer than 2 numbers');
    expect(await ask(target.tid, 0, 2)).toEqual([
      200,
      {
        data: {
          number: {
            tid: target.tid,
            number: target.number,
            history: {
              totalCount: target.messages.length,
              messages: target.messages
                .slice(0, 2)
                .map((m) => ({ id: m.message_id, body: m.body })),
            },
          },
        },
      },
    ]);
    expect(await ask(target.tid, 3, 1)).toEqual([
      200,
      {
        data: { number: { tid: target.tid, number: target.number, history: null } },
        errors: [
          expect.objectContaining({
            message: 'history: end (1) must not be less than start (3)',
            path: ['number', 'history'],
            extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
          }),
        ],
      },
    ]);
  });
});

describe("Apollo Client's persisted-query link against the running gateway", () => {
  it('registers the query once, then sends only its hash (over GET)', async () => {
    const seen: { method: string; hasQuery: boolean }[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const url = new URL(
        typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      );
      const body =
        typeof init?.body === 'string' ? (JSON.parse(init.body) as { query?: string }) : null;
      seen.push({
        method: init?.method ?? 'GET',
        hasQuery: Boolean(body?.query ?? url.searchParams.get('query')),
      });
      return fetch(input, init);
    };
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const link = createPersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(
      new HttpLink({
        uri: gateway.endpoint,
        fetch: recordingFetch,
        headers: {
          Authorization: `Basic ${btoa(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`)}`,
        },
      }),
    );
    const query = gql`
      query PersistedTids {
        ownedNumbers {
          tid
        }
      }
    `;
    const expected = DEMO_ACCOUNT.numbers.map((n) => ({ __typename: 'Number', tid: n.tid }));
    for (let round = 0; round < 2; round += 1) {
      const client = new ApolloClient({ link, cache: createCache() });
      const { data } = await client.query({ query, fetchPolicy: 'no-cache' });
      expect(data).toEqual({ ownedNumbers: expected });
    }
    // Hash only (unknown) -> hash with the query -> hash only, served from the gateway's store.
    expect(seen).toEqual([
      { method: 'GET', hasQuery: false },
      { method: 'POST', hasQuery: true },
      { method: 'GET', hasQuery: false },
    ]);
  });
});
