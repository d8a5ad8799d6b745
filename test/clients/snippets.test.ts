/**
 * Every client snippet of README.md and docs/ (blocks marked `snippet=...`), run as it stands
 * against the gateway on a real port: the credentials and the number come from a prelude, the
 * gateway's address replaces localhost:4000, and nothing else of the snippet is changed. A stale
 * snippet fails here. The last test checks that no marked snippet was left out.
 */
import type { ApolloClient, DocumentNode, ObservableQuery } from '@apollo/client';
import { CombinedGraphQLErrors, gql } from '@apollo/client';
import type { Client as UrqlClient, OperationResult } from '@urql/core';
import { generate, type CodegenConfig } from '@graphql-codegen/cli';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { parse, print } from 'graphql';
import {
  ConnectionHandler,
  commitLocalUpdate,
  fetchQuery,
  type ConcreteRequest,
  type Environment,
  type RecordProxy,
} from 'relay-runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { allSnippets, runSnippets, type Snippet } from '../docs/snippets.js';
import { headCursor, prependNewMessages } from '../../support/recipes/live-apollo-list.js';
import { sleep, until } from '../../support/wait.js';
import { serveGateway, type ServedGateway } from './served-gateway.js';

// Browsers have a WebSocket; Node 20 does not (graphql-ws looks for the global one).
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

const FILES = ['README.md', 'docs/errors.md', 'docs/paging.md', 'docs/client-caching.md'];
const SNIPPETS = allSnippets(FILES);
const ran = new Set<string>();
function snippet(name: string): Snippet {
  const found = SNIPPETS.get(name);
  if (!found) throw new Error(`no snippet named ${name} in ${FILES.join(', ')}`);
  ran.add(name);
  return found;
}

const NUMBER = DEMO_ACCOUNT.numbers[0]!;
const numberId = Buffer.from(`Number:${NUMBER.tid}`).toString('base64');
const prelude = (credentials = DEMO_CREDENTIALS) => `
const sysId = ${JSON.stringify(credentials.sysId)};
const authToken = ${JSON.stringify(credentials.authToken)};
const tid = ${JSON.stringify(NUMBER.tid)};
const numberId = ${JSON.stringify(numberId)};
const rendered: unknown[] = [];
const render = (data: unknown) => void rendered.push(data);
const refusals: string[] = [];
const onRefused = (reason: string) => void refusals.push(reason);
`;

let gateway: ServedGateway;
beforeAll(async () => {
  gateway = await serveGateway();
  // The urql set-up imports its copy of the client schema from beside it, as a frontend would.
  const dir = new URL('../../test-output/snippets/', import.meta.url);
  await mkdir(dir, { recursive: true });
  await cp(
    new URL('../../schema.client.graphql', import.meta.url),
    new URL('schema.client.graphql', dir),
  );
});
afterAll(() => gateway.close());
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function run<T>(
  names: readonly string[],
  exports: readonly string[],
  credentials?: typeof DEMO_CREDENTIALS,
) {
  // A snippet that subscribes after the list shown gets its head cursor, as the page would have.
  const head = names.includes('urql-live')
    ? `const head: string | undefined = ${JSON.stringify(await headNow())};\n`
    : '';
  return runSnippets<T>(
    names.map((name) => snippet(name)),
    { origin: gateway.origin, prelude: prelude(credentials) + head, exports },
  );
}

interface MessagesPage {
  number: {
    messages: {
      edges: { node: { id: string } }[];
      pageInfo: { hasNextPage: boolean; endCursor: string };
    };
  };
}

/** Messages arrive: one new inbound message at the head of the number's history. */
function arrive(body: string): void {
  gateway.simulator.deliver(DEMO_CREDENTIALS.sysId, NUMBER.tid, body);
}

const historyCalls = () =>
  gateway.simulator.calls.filter((c) => c.operation === 'smshistory').length;

/**
 * Subscribes (via `start`) to `numbers` numbers (all of the demo account's) and waits until, for
 * each, the subscription has read the head of its history and the live loop's first poll has
 * learnt what is there: a message that arrives after both is delivered. Counted from the moment
 * the subscription exists (a query the start makes reads histories too), three calls per number,
 * as one may be the last poll of a loop an earlier test left, still under way.
 */
async function subscribed(
  start: () => unknown,
  numbers = DEMO_ACCOUNT.numbers.length,
): Promise<void> {
  const live = gateway.test.live!;
  await until(() => live.stats.subscriptions === 0, 15_000);
  await start();
  await until(() => live.stats.subscriptions > 0, 15_000);
  const joined = historyCalls();
  await until(() => historyCalls() >= joined + 3 * numbers, 15_000);
}

/** The `data` of `query` on the number, read from the gateway without any client. */
async function readNumber<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${gateway.origin}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${btoa(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`)}`,
    },
    body: JSON.stringify({ query, variables: { tid: NUMBER.tid, ...variables } }),
  });
  return ((await response.json()) as { data: T }).data;
}

/** The ids of the `first` messages after `cursor`, read from the gateway without any client. */
async function idsAfter(cursor: string, first: number): Promise<string[]> {
  const data = await readNumber<MessagesPage>(
    `query($tid: ID!, $after: String, $first: Int) { number(tid: $tid) {
        messages(first: $first, after: $after) { edges { node { id } } } } }`,
    { after: cursor, first },
  );
  return data.number.messages.edges.map((e) => e.node.id);
}

/** The cursor of the number's newest message, read from the gateway without any client. */
async function headNow(): Promise<string> {
  const data = await readNumber<{ number: { messages: { edges: { cursor: string }[] } } }>(
    `query($tid: ID!) { number(tid: $tid) { messages(first: 1) { edges { cursor } } } }`,
  );
  return data.number.messages.edges[0]!.cursor;
}

interface ListEdge {
  readonly cursor: string;
  readonly node: { readonly id: string; readonly body: string };
}

/**
 * What every live-list test checks once a message has arrived: it is at the head, once, the
 * rest of the list is what it was, and its cursor pages on (`after:` it come the messages that
 * were first before it arrived).
 */
async function landedOnceAtHead(
  edges: readonly ListEdge[],
  before: readonly ListEdge[],
  body: string,
) {
  expect(edges[0]?.node.body).toBe(body);
  expect(edges.slice(1).map((e) => e.node.id)).toEqual(before.map((e) => e.node.id));
  expect(new Set(edges.map((e) => e.node.id)).size).toBe(edges.length);
  expect(await idsAfter(edges[0]!.cursor, 2)).toEqual(before.slice(0, 2).map((e) => e.node.id));
}

/**
 * Delivers one more message after `body` and waits for it at the head: a repeat of `body`, or any
 * stray event, reaches the client before it, so no pause is needed to rule them out.
 */
async function landedOnceUnderBarrier(
  edges: () => readonly ListEdge[],
  before: readonly ListEdge[],
  body: string,
) {
  const barrier = `${body} (barrier)`;
  arrive(barrier);
  await until(() => edges()[0]?.node.body === barrier, 15_000);
  expect(new Set(edges().map((e) => e.node.id)).size).toBe(edges().length);
  await landedOnceAtHead(edges().slice(1), before, body);
}

const NODE_FRAGMENT = gql`
  query ThroughNode {
    ownedNumbers {
      tid
      ...NodeId
    }
  }
  fragment NodeId on Node {
    id
  }
`;

describe('README.md', () => {
  it('readme-apollo: the Inbox query, deferred histories and all', async () => {
    const { client, INBOX } = await run<{ client: ApolloClient; INBOX: DocumentNode }>(
      ['readme-apollo'],
      ['client', 'INBOX'],
    );
    const { data } = await client.query<{
      ownedNumbers: { id: string; tid: string; history: { totalCount: number } }[];
    }>({ query: INBOX });
    expect(data?.ownedNumbers.map((n) => n.tid)).toEqual(DEMO_ACCOUNT.numbers.map((n) => n.tid));
    expect(data?.ownedNumbers[0]?.history.totalCount).toBeGreaterThan(0);
    // Fields selected through a fragment on Node survive (possibleTypes).
    const through = await client.query<{ ownedNumbers: { id?: string }[] }>({
      query: NODE_FRAGMENT,
    });
    expect(through.data?.ownedNumbers[0]?.id).toBe(numberId);
    client.stop();
  });
});

describe('docs/errors.md', () => {
  it('errors-apollo: errorPolicy all gives the partial data and BAD_USER_INPUT', async () => {
    const { data, error } = await run<{ data: unknown; error: unknown }>(
      ['apollo-setup', 'errors-apollo'],
      ['data', 'error'],
    );
    expect(data).toMatchObject({ number: { tid: 'TN-L-0001', history: null } });
    expect(CombinedGraphQLErrors.is(error)).toBe(true);
    if (CombinedGraphQLErrors.is(error)) {
      expect(error.errors[0]).toMatchObject({
        path: ['number', 'history'],
        extensions: { code: 'BAD_USER_INPUT', argumentName: 'end' },
      });
    }
  });

  it('errors-fetch: a field error comes with HTTP 200, next to the data', async () => {
    const { response, data, errors } = await run<{
      response: Response;
      data: { number: { history: { messages: unknown[] } } };
      errors: unknown;
    }>(['errors-fetch'], ['response', 'data', 'errors']);
    expect(response.status).toBe(200);
    expect(errors).toBeUndefined();
    expect(data.number.history.messages).toHaveLength(5);
  });
});

describe('docs/paging.md', () => {
  it('paging-apollo: loadOlder merges the second page into the watched list', async () => {
    const { client, loadOlder, rendered } = await run<{
      client: ApolloClient;
      loadOlder: () => Promise<void>;
      rendered: (MessagesPage | undefined)[];
    }>(['paging-apollo'], ['client', 'loadOlder', 'rendered']);
    const last = () => rendered.at(-1)?.number.messages.edges ?? [];
    await until(() => last().length === 20);
    await loadOlder();
    await until(() => last().length === 40);
    expect(new Set(last().map((e) => e.node.id)).size).toBe(40);
    client.stop();
  });

  it('paging-urql: with the one urql set-up, the second query holds both pages', async () => {
    const { first, both, live } = await run<{
      first: OperationResult<MessagesPage>;
      both: OperationResult<MessagesPage>;
      live: { unsubscribe(): void };
    }>(['urql-setup', 'paging-urql', 'urql-live'], ['first', 'both', 'live']);
    live.unsubscribe();
    expect(first.error).toBeUndefined();
    expect(first.data?.number.messages.edges).toHaveLength(20);
    const ids = both.data?.number.messages.edges.map((e) => e.node.id) ?? [];
    expect(ids).toHaveLength(40);
    expect(ids.slice(0, 20)).toEqual(first.data?.number.messages.edges.map((e) => e.node.id));
  });

  it('paging-urql with urql-live: an arrival heads the merged pages, once, and counts in totalCount', async () => {
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args) => void warnings.push(args.join(' ')));
    try {
      type Paged = { number: { messages: { totalCount: number; edges: ListEdge[] } } };
      let module:
        | {
            client: UrqlClient;
            PAGE: string;
            both: OperationResult<Paged>;
            live: { unsubscribe(): void };
          }
        | undefined;
      await subscribed(async () => {
        module = await run(
          ['urql-setup', 'paging-urql', 'urql-live'],
          ['client', 'PAGE', 'both', 'live'],
        );
        cleanups.push(() => module!.live.unsubscribe());
      }, 1);
      const { client, PAGE, both } = module!;
      const after = (both.operation.variables as { after: string }).after;
      const seen: Paged[] = [];
      const watching = client
        .query<Paged>(PAGE, { tid: NUMBER.tid, after })
        .subscribe(({ data }) => data && seen.push(data));
      cleanups.push(() => watching.unsubscribe());
      const list = () => seen.at(-1)?.number.messages;
      await until(() => list()?.edges.length === 40);
      const before = list()!;
      arrive('urql paged arrival');
      await until(() => list()?.edges[0]?.node.body === 'urql paged arrival', 15_000);
      await landedOnceAtHead(list()!.edges, before.edges, 'urql paged arrival');
      expect(list()!.edges).toHaveLength(41);
      expect(list()!.totalCount).toBe(before.totalCount + 1);
      expect(warnings).toEqual([]);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('docs/client-caching.md: Apollo Client 4', () => {
  it('apollo-setup: keeps fields selected through a fragment on Node', async () => {
    const { client } = await run<{ client: ApolloClient }>(['apollo-setup'], ['client']);
    const { data } = await client.query<{ ownedNumbers: { id?: string }[] }>({
      query: NODE_FRAGMENT,
    });
    expect(data?.ownedNumbers.map((n) => n.id)).toEqual(
      DEMO_ACCOUNT.numbers.map((n) => Buffer.from(`Number:${n.tid}`).toString('base64')),
    );
    client.stop();
  });

  it('apollo-setup keeps the resumeLink of the live-updates recipe, unchanged', async () => {
    const recipe = await readFile(
      new URL('../../support/recipes/live-apollo.ts', import.meta.url),
      'utf8',
    );
    const link = (text: string) => /const resumeLink = [\s\S]*?\n\}\);\n/.exec(text)?.[0];
    expect(link(snippet('apollo-setup').code)).toBeDefined();
    expect(link(snippet('apollo-setup').code)).toBe(link(recipe));
  });

  it("apollo-setup with paging.md's recipe: a new edge lands once at the head, also across a dropped WebSocket", async () => {
    const { client } = await run<{ client: ApolloClient }>(['apollo-setup'], ['client']);
    const PAGE = gql`
      query Head($tid: ID!) {
        number(tid: $tid) {
          id
          messages(first: 3) {
            totalCount
            edges {
              cursor
              node {
                id
                body
              }
            }
          }
        }
      }
    `;
    type Page = { number: { messages: { totalCount: number; edges: ListEdge[] } } };
    const watched: ObservableQuery<Page> = client.watchQuery({
      query: PAGE,
      variables: { tid: NUMBER.tid },
    });
    const seen: Page[] = [];
    const sub = watched.subscribe(({ data }) => data && seen.push(data as Page));
    await until(() => seen.at(-1)?.number.messages.edges.length === 3);
    const first = seen.at(-1)!.number.messages;
    const errors: unknown[] = [];
    // A message arrives between the list and the subscription: after the list's head, it comes.
    arrive('apollo edge 0');
    const after = [headCursor(first)];
    await subscribed(
      () => cleanups.push(prependNewMessages(client, [NUMBER.tid], after, (e) => errors.push(e))),
      1,
    );
    const edges = () => seen.at(-1)?.number.messages.edges ?? [];
    await until(() => edges()[0]?.node.body === 'apollo edge 0', 15_000);
    await landedOnceAtHead(edges(), first.edges, 'apollo edge 0');

    const listed = edges();
    arrive('apollo edge 1');
    await until(() => edges()[0]?.node.body === 'apollo edge 1', 15_000);
    await landedOnceAtHead(edges(), listed, 'apollo edge 1');
    expect(seen.at(-1)?.number.messages.totalCount).toBe(first.totalCount + 2);

    // The network drops; a message arrives before graphql-ws reconnects (1.3 s at the earliest).
    const before = edges();
    const upgrades = gateway.upgrades();
    gateway.dropWebSockets();
    arrive('apollo edge 2');
    await until(() => edges()[0]?.node.body === 'apollo edge 2', 10_000);
    expect(gateway.upgrades()).toBeGreaterThan(upgrades);
    await landedOnceUnderBarrier(edges, before, 'apollo edge 2');
    expect(errors).toEqual([]);
    sub.unsubscribe();
    client.stop();
  }, 20_000);

  it('apollo-subscribe-to-more: subscribes after the head of the watched list; an arrival lands once at its head', async () => {
    type Inbox = { number: { messages: { edges: ListEdge[] } } };
    let module:
      { client: ApolloClient; stopLive: () => void; rendered: (Inbox | undefined)[] } | undefined;
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args) => void warnings.push(args.join(' ')));
    // A message arrives as the list's answer reaches the client, before it subscribes.
    const fetched = globalThis.fetch;
    let between = false;
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const response = await fetched(input, init);
      if (!between && String(init?.body ?? '').includes('query Inbox')) {
        between = true;
        arrive('apollo between');
      }
      return response;
    });
    try {
      await subscribed(async () => {
        module = await run(
          ['apollo-setup', 'apollo-subscribe-to-more'],
          ['client', 'stopLive', 'rendered'],
        );
        cleanups.push(() => module!.stopLive());
      }, 1);
      const { client, rendered } = module!;
      const edges = () => rendered.at(-1)?.number.messages.edges ?? [];
      const bodies = () => edges().map((e) => e.node.body);
      expect(between).toBe(true);
      await until(() => bodies()[0] === 'apollo between', 15_000);
      expect(bodies().filter((b) => b === 'apollo between')).toHaveLength(1);
      const before = edges();
      arrive('apollo more arrival');
      await until(() => edges()[0]?.node.body === 'apollo more arrival', 15_000);
      await landedOnceUnderBarrier(edges, before, 'apollo more arrival');
      expect(edges()).toHaveLength(23);
      expect(warnings).toEqual([]);
      client.stop();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("apollo-setup: a 4403 refusal reaches onRefused by graphql-ws's closed event, at once, with no retry", async () => {
    const { client, refusals } = await run<{ client: ApolloClient; refusals: string[] }>(
      ['apollo-setup'],
      ['client', 'refusals'],
      { sysId: '', authToken: '' },
    );
    const before = gateway.upgrades();
    const errors: unknown[] = [];
    // Apollo Client 4 hands a subscription's error to `next`, as `result.error`: a plain Error.
    const sub = client.subscribe({ query: gql('subscription { messageAdded { id } }') }).subscribe({
      next: (result) => void (result.error && errors.push(result.error)),
      error: (error: unknown) => void errors.push(error),
    });
    await until(() => refusals.length > 0, 15_000);
    expect(refusals).toEqual([
      expect.stringMatching(/^Malformed credentials in connectionParams: /),
    ]);
    await until(() => errors.length > 0);
    expect(errors).toHaveLength(1);
    // graphql-ws errors its subscribers only once it decided not to retry (a retried close is
    // silent): the error is the signal, no waiting for a reconnect that cannot come.
    expect(gateway.upgrades() - before).toBe(1);
    expect(refusals).toHaveLength(1);
    sub.unsubscribe();
    client.stop();
  });
});

describe('docs/client-caching.md: urql Graphcache', () => {
  it('urql-setup: matches fragments on Node by the schema, merges pages, warns about nothing', async () => {
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args) => void warnings.push(args.join(' ')));
    try {
      const { client } = await run<{ client: UrqlClient }>(['urql-setup'], ['client']);
      const through = await client.query(NODE_FRAGMENT, {}).toPromise();
      expect(through.error).toBeUndefined();
      expect((through.data as { ownedNumbers: { id: string }[] }).ownedNumbers[0]?.id).toBe(
        numberId,
      );
      const PAGE = `query P($tid: ID!, $after: String) { number(tid: $tid) { id
        messages(first: 5, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }`;
      const first = await client.query<MessagesPage>(PAGE, { tid: NUMBER.tid }).toPromise();
      const after = first.data?.number.messages.pageInfo.endCursor;
      const both = await client.query<MessagesPage>(PAGE, { tid: NUMBER.tid, after }).toPromise();
      expect(both.data?.number.messages.edges).toHaveLength(10);

      const events: unknown[] = [];
      let unsubscribe = (): void => {};
      await subscribed(() => {
        ({ unsubscribe } = client
          .subscription('subscription { messageAdded { id body } }', {})
          .subscribe((result) => events.push(result.data)));
      });
      arrive('urql arrival');
      await until(() => events.length > 0, 15_000);
      expect(events[0]).toMatchObject({ messageAdded: { body: 'urql arrival' } });
      unsubscribe();
      expect(warnings).toEqual([]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('urql-live: with the updater of urql-setup, a new edge lands once at the head of the watched list', async () => {
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args) => void warnings.push(args.join(' ')));
    try {
      const PAGE = `query Head($tid: ID!) { number(tid: $tid) { id
        messages(first: 3) { totalCount edges { cursor node { id body } } pageInfo { hasNextPage endCursor } } } }`;
      type Page = { number: { messages: { totalCount: number; edges: ListEdge[] } } };
      let client: UrqlClient | undefined;
      await subscribed(async () => {
        ({ client } = await run<{ client: UrqlClient; live: { unsubscribe(): void } }>(
          ['urql-setup', 'urql-live'],
          ['client', 'live'],
        ).then((module) => {
          cleanups.push(() => module.live.unsubscribe());
          return module;
        }));
      }, 1);
      const seen: Page[] = [];
      const watching = client!
        .query<Page>(PAGE, { tid: NUMBER.tid })
        .subscribe(({ data }) => data && seen.push(data));
      cleanups.push(() => watching.unsubscribe());
      const edges = () => seen.at(-1)?.number.messages.edges ?? [];
      await until(() => edges().length === 3);
      const before = edges();
      const count = seen.at(-1)!.number.messages.totalCount;
      arrive('urql edge');
      await until(() => edges()[0]?.node.body === 'urql edge', 15_000);
      await landedOnceAtHead(edges(), before, 'urql edge');
      // The updater counts it too: a list's "N messages" is not left behind.
      await until(() => seen.at(-1)?.number.messages.totalCount === count + 1, 15_000);
      expect(warnings).toEqual([]);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('4403 refusals in the other set-ups', () => {
  it('urql-setup: onRefused hears the refusal once; the subscription ends with an error, no retry', async () => {
    const { client, refusals } = await run<{ client: UrqlClient; refusals: string[] }>(
      ['urql-setup'],
      ['client', 'refusals'],
      { sysId: DEMO_CREDENTIALS.sysId, authToken: 'not-the-token' },
    );
    const before = gateway.upgrades();
    const results: OperationResult[] = [];
    const { unsubscribe } = client
      .subscription('subscription { messageAdded { id } }', {})
      .subscribe((result) => results.push(result));
    await until(() => refusals.length > 0, 15_000);
    expect(refusals).toEqual(['The SMS service refused the credentials']);
    await until(() => results.length > 0);
    expect(results[0]?.error).toBeDefined();
    // graphql-ws errors its subscribers only once it decided not to retry (a retried close is
    // silent): the error is the signal, no waiting for a reconnect that cannot come.
    expect(gateway.upgrades() - before).toBe(1);
    unsubscribe();
  });

  it('relay-environment: onRefused hears the refusal once, no retry', async () => {
    const { subscribe, refusals } = await run<{
      subscribe: (
        request: { name: string; text: string },
        variables: Record<string, unknown>,
      ) => { subscribe(sink: { error(e: unknown): void }): { unsubscribe(): void } };
      refusals: string[];
    }>(['relay-environment'], ['subscribe', 'refusals'], { sysId: '', authToken: '' });
    const before = gateway.upgrades();
    const errors: unknown[] = [];
    const sub = subscribe(
      { name: 'Refused', text: 'subscription Refused { messageAdded { id } }' },
      {},
    ).subscribe({ error: (error) => void errors.push(error) });
    await until(() => refusals.length > 0, 15_000);
    expect(refusals).toEqual([
      expect.stringMatching(/^Malformed credentials in connectionParams: /),
    ]);
    await until(() => errors.length > 0);
    // graphql-ws errors its subscribers only once it decided not to retry (a retried close is
    // silent): the error is the signal, no waiting for a reconnect that cannot come.
    expect(gateway.upgrades() - before).toBe(1);
    sub.unsubscribe();
  });

  it('errors-ws-refused: plain graphql-ws in Node, with ws and no global WebSocket', async () => {
    const global = globalThis as { WebSocket?: unknown };
    const polyfill = global.WebSocket;
    delete global.WebSocket;
    try {
      const before = gateway.upgrades();
      const { refusals, stop } = await run<{ refusals: string[]; stop: () => void }>(
        ['errors-ws-refused'],
        ['refusals', 'stop'],
        { sysId: DEMO_CREDENTIALS.sysId, authToken: 'not-the-token' },
      );
      await until(() => refusals.length > 0, 15_000);
      expect(refusals).toEqual(['The SMS service refused the credentials']);
      await sleep(1_500);
      expect(gateway.upgrades() - before).toBe(1);
      expect(refusals).toHaveLength(1);
      stop();
    } finally {
      global.WebSocket = polyfill;
    }
  });
});

const execFileAsync = promisify(execFile);
const RELAY_DIR = new URL('../../test-output/relay/', import.meta.url);

describe('docs/client-caching.md: Relay', () => {
  it('relay-documents compile; the environment pages, and @prependEdge puts an arrival first, once', async () => {
    // relay-compiler over the documents as a component would hold them, in graphql tags.
    await rm(RELAY_DIR, { recursive: true, force: true });
    await mkdir(new URL('src/', RELAY_DIR), { recursive: true });
    await cp(
      new URL('../../schema.client.graphql', import.meta.url),
      new URL('schema.client.graphql', RELAY_DIR),
    );
    const tags = parse(snippet('relay-documents').code)
      .definitions.map((definition) => `graphql\`\n${print(definition)}\n\`;`)
      .join('\n');
    await writeFile(
      new URL('src/Inbox.ts', RELAY_DIR),
      `import { graphql } from 'relay-runtime';\n${tags}\n`,
    );
    await writeFile(
      new URL('relay.config.json', RELAY_DIR),
      JSON.stringify({
        src: './src',
        schema: './schema.client.graphql',
        language: 'typescript',
        eagerEsModules: true,
      }),
    );
    await execFileAsync(
      new URL('../../node_modules/.bin/relay-compiler', import.meta.url).pathname,
      [],
      { cwd: RELAY_DIR.pathname },
    );

    // The head of the list the component shows, as it read it: the subscription starts there.
    const head = await headNow();
    const beforeArrivals = historyCalls();
    const { environment, arrivals, InboxQuery, PaginationQuery } = await runSnippets<{
      environment: Environment;
      arrivals: { dispose(): void };
      InboxQuery: ConcreteRequest;
      PaginationQuery: ConcreteRequest;
    }>([snippet('relay-environment'), snippet('relay-arrivals')], {
      origin: gateway.origin,
      prelude: `${prelude()}
const head: string | undefined = ${JSON.stringify(head)};
import InboxQuery from './__generated__/InboxQuery.graphql';
import PaginationQuery from './__generated__/InboxMessagesPaginationQuery.graphql';`,
      exports: ['environment', 'arrivals', 'InboxQuery', 'PaginationQuery'],
      dir: new URL('src/', RELAY_DIR),
    });

    const edges = (): ListEdge[] => {
      let found: ListEdge[] = [];
      commitLocalUpdate(environment, (store) => {
        const number = store.get(numberId);
        const connection = number && ConnectionHandler.getConnection(number, 'Inbox_messages');
        found = (connection?.getLinkedRecords('edges') ?? []).map((edge: RecordProxy | null) => ({
          cursor: String(edge?.getValue('cursor')),
          node: {
            id: String(edge?.getLinkedRecord('node')?.getValue('id')),
            body: String(edge?.getLinkedRecord('node')?.getValue('body') ?? ''),
          },
        }));
      });
      return found;
    };
    const bodies = () => edges().map((e) => e.node.body);

    await fetchQuery(environment, InboxQuery, { tid: NUMBER.tid }).toPromise();
    expect(bodies()).toHaveLength(20);
    const cursor = await new Promise<string>((resolve) =>
      commitLocalUpdate(environment, (store) => {
        const connection = ConnectionHandler.getConnection(store.get(numberId)!, 'Inbox_messages');
        resolve(String(connection?.getLinkedRecord('pageInfo')?.getValue('endCursor')));
      }),
    );
    await fetchQuery(environment, PaginationQuery, {
      id: numberId,
      count: 20,
      cursor,
    }).toPromise();
    expect(bodies()).toHaveLength(40);

    // The subscription started with the snippet; its loop has polled at least once by now.
    await until(() => historyCalls() > beforeArrivals + 2, 15_000);
    const before = edges();
    arrive('relay arrival');
    await until(() => bodies()[0] === 'relay arrival', 15_000);
    await landedOnceUnderBarrier(edges, before, 'relay arrival');
    expect(bodies()).toHaveLength(42);
    arrivals.dispose();
  }, 60_000);
});

describe('docs/client-caching.md: GraphQL Code Generator', () => {
  it('codegen-config: the client preset types a document against schema.client.graphql', async () => {
    const { config } = await run<{ config: CodegenConfig }>(['codegen-config'], ['config']);
    // The snippet's paths are a frontend's; here they point at this repository and a scratch dir.
    const dir = new URL('../../test-output/codegen/', import.meta.url);
    await rm(dir, { recursive: true, force: true });
    await mkdir(new URL('src/', dir), { recursive: true });
    await writeFile(
      new URL('src/inbox.ts', dir),
      "import { graphql } from './gql';\nexport const Inbox = graphql(`query Inbox { ownedNumbers { id tid number history(start: 0, end: 1) { mostRecentAt } } }`);\n",
    );
    const [output, options] = Object.entries(config.generates)[0]!;
    expect(output).toBe('src/gql/');
    // The schema path is this repository's file, as a frontend keeps a copy of it (the package
    // is private: no node_modules path can point at it).
    expect(typeof config.schema).toBe('string');
    const schemaFile = new URL(`../../${config.schema as string}`, import.meta.url);
    expect(
      existsSync(schemaFile),
      `${config.schema as string} is not a file of this repository`,
    ).toBe(true);
    const files = await generate(
      {
        ...config,
        schema: schemaFile.pathname,
        documents: [new URL('src/*.ts', dir).pathname],
        generates: { [new URL(`${output}`, dir).pathname]: options },
        silent: true,
      },
      true,
    );
    const graphql = files.find((f: { filename: string }) => f.filename.endsWith('graphql.ts'));
    expect(graphql?.content).toContain('export type InboxQuery');
    expect(graphql?.content).toContain('history: { mostRecentAt: string | null } | null');
  });
});

it('examples/inbox builds its client with the apollo-setup snippet, unchanged', async () => {
  const example = await readFile(
    new URL('../../examples/inbox/src/client.ts', import.meta.url),
    'utf8',
  );
  const setup = snippet('apollo-setup')
    .code.replaceAll("'http://localhost:4000/graphql'", 'httpUrl')
    .replaceAll("'ws://localhost:4000/graphql'", 'wsUrl');
  // Compared without whitespace: the example indents the set-up inside a function.
  const squeeze = (text: string) => text.replace(/\s+/g, '');
  for (const line of setup.split('\n').filter((l) => l.startsWith('import '))) {
    expect(example).toContain(line);
  }
  const body = setup
    .split('\n')
    .filter((l) => !l.startsWith('import '))
    .join('\n');
  expect(squeeze(example)).toContain(squeeze(body));
});

it('ran every marked code snippet of README.md and docs/ (test/docs checks the graphql ones)', () => {
  const code = [...SNIPPETS.values()].filter(
    (s) => s.lang !== 'graphql' || s.name === 'relay-documents',
  );
  expect([...ran].sort()).toEqual(code.map((s) => s.name).sort());
});
