/**
 * Live updates as real clients take them, over a real HTTP server on 127.0.0.1: graphql-ws
 * (WebSocket, credentials in connectionParams), Apollo Client's GraphQLWsLink, and the
 * graphql-sse client. Against a loopback upstream whose histories grow on command.
 */
import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client } from 'graphql-ws';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { attachWebSocket, type AttachedWebSocket } from '../../src/http/websocket.js';
import { GRAPHQL_PATH } from '../../src/http/paths.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import { sleep, until } from '../../support/wait.js';
import { LocalBus } from '../../src/live/bus.js';
import { ticksOf, type BusTicks } from './barriers.js';

const POLL_MS = 50;
const BASIC_ONE = `Basic ${Buffer.from('AC-1:tok-AC-1').toString('base64')}`;
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id tid body } }';

interface Running {
  upstream: GrowingUpstream;
  test: TestGateway;
  loops: BusTicks;
  server: Server;
  ws: AttachedWebSocket;
  http: string;
  socket: string;
}

let running: Running | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  if (!running) return;
  await running.ws.close();
  await new Promise((resolve) => running!.server.close(resolve));
  await running.test.close();
  await running.upstream.close();
  running = undefined;
});

async function serve(maxPerConnection = 20): Promise<Running> {
  const upstream = await startGrowingUpstream({ 'AC-1': ['T-A', 'T-B'], 'AC-2': ['T-C'] });
  const bus = new LocalBus();
  const loops = ticksOf(bus);
  const test = createTestGateway(upstream.url, { live: { pollMs: POLL_MS, bus } });
  const server = createServer(test.gateway);
  const ws = attachWebSocket(server, test.gateway, {
    path: GRAPHQL_PATH,
    maxPerConnection,
    keepAliveMs: 1_000,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  running = {
    upstream,
    test,
    loops,
    server,
    ws,
    http: `http://127.0.0.1:${port}${GRAPHQL_PATH}`,
    socket: `ws://127.0.0.1:${port}${GRAPHQL_PATH}`,
  };
  return running;
}

function wsClient(url: string, connectionParams: Record<string, string>): Client {
  const client = createWsClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: false,
  });
  cleanups.push(() => client.dispose());
  return client;
}

/**
 * Waits until a new subscription to one number is live on this fresh upstream: it has read the
 * head of the history itself and the poll loop's first poll has learnt what is there, so a
 * message that arrives now is new to both.
 */
async function live(upstream: GrowingUpstream): Promise<void> {
  await until(() => upstream.callsOf('smshistory') >= 2);
}

describe('graphql-ws over WebSocket', () => {
  it('delivers new messages with credentials in connectionParams, and frees the loop on close', async () => {
    const { upstream, test, loops, socket } = await serve();
    const client = wsClient(socket, { 'X-Sys-Id': 'AC-1', 'X-Auth-Token': 'tok-AC-1' });
    const received: unknown[] = [];
    const stop = client.subscribe(
      { query: ON_A },
      { next: (value) => received.push(value), error: () => undefined, complete: () => undefined },
    );
    await live(upstream);
    const ids = upstream.add('T-A', 2);
    await until(() => received.length === 2);
    expect(
      received.map((r) => (r as { data: { messageAdded: { id: string } } }).data.messageAdded.id),
    ).toEqual(ids);

    stop();
    await until(() => test.live!.stats.topics === 0);
    // Its loop is over, a tick under way included: a poll from here on is one too many.
    await until(() => loops.stopped() === 1);
    const after = upstream.callsOf('smshistory');
    // Time passing is the claim: four poll intervals bring no poll.
    await sleep(POLL_MS * 4);
    expect(upstream.callsOf('smshistory')).toBe(after);
  });

  it('closes a connection without credentials with 4403, before any upstream call', async () => {
    const { upstream, socket } = await serve();
    const closed = new Promise<number>((resolve) => {
      const client = createWsClient({
        url: socket,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: false,
        connectionParams: { Authorization: 'Bearer nope' },
        onNonLazyError: () => undefined,
        on: { closed: (event) => resolve((event as { code: number }).code) },
      });
      cleanups.push(() => client.dispose());
    });
    expect(await closed).toBe(4403);
    expect(upstream.calls).toHaveLength(0);
  });

  it('refuses wrong credentials in the stream as UNAUTHENTICATED, with no data', async () => {
    const { socket } = await serve();
    const client = wsClient(socket, {
      Authorization: `Basic ${Buffer.from('AC-1:wrong').toString('base64')}`,
    });
    const outcome = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: ON_A },
        { next: resolve, error: resolve, complete: () => undefined },
      );
    });
    expect(JSON.stringify(outcome)).toContain('UNAUTHENTICATED');
    expect(JSON.stringify(outcome)).not.toContain('messageAdded":{');
  });

  it('caps operations per connection with a clear error', async () => {
    await serve(2);
    const client = wsClient(running!.socket, { Authorization: BASIC_ONE });
    const sink = { next: () => undefined, error: () => undefined, complete: () => undefined };
    client.subscribe({ query: ON_A }, sink);
    client.subscribe({ query: ON_A }, sink);
    await until(() => running!.test.live!.stats.subscriptions === 2);
    const refused = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: ON_A },
        { next: resolve, error: resolve, complete: () => undefined },
      );
    });
    expect(JSON.stringify(refused)).toContain(
      'This connection already runs 2 operations, the most allowed; complete one first',
    );
    expect(JSON.stringify(refused)).toContain('SUBSCRIPTION_LIMIT');
  });

  it('keeps an idle connection alive with pings', async () => {
    const { socket } = await serve();
    const raw = new WebSocket(socket, 'graphql-transport-ws');
    cleanups.push(() => raw.close());
    await new Promise((resolve) => raw.once('open', resolve));
    const opened = performance.now();
    // keepAliveMs is 1000 here: the first ping, or what happened instead within five times that
    // (a loaded machine may be late by seconds; a ping too early is still told apart).
    const outcome = new Promise<string>((resolve) => {
      raw.once('ping', () =>
        resolve(
          `ping after ${performance.now() - opened >= 950 ? 'the interval' : 'too little idle time'}`,
        ),
      );
      raw.once('close', (code) => resolve(`closed with ${code}`));
      setTimeout(() => resolve('no ping within 5000 ms'), 5_000);
    });
    raw.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: BASIC_ONE } }));
    expect(await outcome).toBe('ping after the interval');
    // The ping keeps it open: still usable afterwards.
    expect(raw.readyState).toBe(WebSocket.OPEN);
  });

  it('answers queries too, over the same connection', async () => {
    const { socket } = await serve();
    const client = wsClient(socket, { Authorization: BASIC_ONE });
    const result = await new Promise<unknown>((resolve, reject) => {
      client.subscribe(
        { query: '{ ownedNumbers { tid } }' },
        { next: resolve, error: reject, complete: () => undefined },
      );
    });
    expect(result).toEqual({ data: { ownedNumbers: [{ tid: 'T-A' }, { tid: 'T-B' }] } });
  });
});

describe('real frontend clients', () => {
  it('Apollo Client with GraphQLWsLink receives messageAdded', async () => {
    const { upstream, socket } = await serve();
    const link = new GraphQLWsLink(
      createWsClient({
        url: socket,
        webSocketImpl: WebSocket,
        connectionParams: { Authorization: BASIC_ONE },
        retryAttempts: 0,
      }),
    );
    const apollo = new ApolloClient({ link, cache: new InMemoryCache() });
    cleanups.push(() => apollo.stop());
    const bodies: string[] = [];
    const subscription = apollo
      .subscribe<{ messageAdded: { id: string; body: string } }>({
        query: gql`
          subscription OnNewMessage {
            messageAdded(tids: ["T-A"]) {
              id
              tid
              body
            }
          }
        `,
      })
      .subscribe({
        next: (result) => {
          if (result.data) bodies.push(result.data.messageAdded.body);
        },
      });
    cleanups.push(() => subscription.unsubscribe());
    await live(upstream);
    upstream.add('T-A', 1);
    await until(() => bodies.length === 1);
    expect(bodies[0]).toMatch(/^message \d+ on T-A$/);
  });

  it('the graphql-sse client receives messageAdded with credentials in headers', async () => {
    const { upstream, http } = await serve();
    const client = createSseClient({
      url: http,
      headers: { authorization: BASIC_ONE },
      retryAttempts: 0,
    });
    cleanups.push(() => client.dispose());
    const events = client.iterate<{ messageAdded: { id: string } }>({ query: ON_A });
    cleanups.push(() => events.return?.());
    const ids: string[] = [];
    const reading = (async () => {
      for await (const event of events) {
        if (event.data) ids.push(event.data.messageAdded.id);
        if (ids.length === 2) break;
      }
    })();
    await live(upstream);
    const added = upstream.add('T-A', 2);
    await reading;
    expect(ids).toEqual(added);
  });
});
