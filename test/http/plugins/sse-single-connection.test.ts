/**
 * graphql-sse's single connection mode at /graphql, with graphql-sse's own client
 * (`singleConnection: true`) against the gateway on a real port and the simulator behind it:
 * several operations share one stream; every request of a stream must carry the credentials it
 * was reserved with; the distinct connections mode still works beside it; on shutdown the stream
 * ends without `complete`, so the client reconnects.
 */
import type { IncomingMessage } from 'node:http';
import { createClient, TOKEN_HEADER_KEY, type Client } from 'graphql-sse';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { until, untilAsync } from '../../../support/wait.js';
import { serveGateway, type ServedGateway } from '../../clients/served-gateway.js';
import { watchOverSse } from '../../../support/recipes/live-sse.js';
import { createLiveSseSingleClient } from '../../../support/recipes/live-sse-single.js';
import type { NewMessage } from '../../../support/recipes/live-results.js';

const NUMBER = DEMO_ACCOUNT.numbers[0]!;
const authorization = (sysId: string, authToken: string) =>
  `Basic ${Buffer.from(`${sysId}:${authToken}`).toString('base64')}`;
const DEMO = authorization(DEMO_CREDENTIALS.sysId, DEMO_CREDENTIALS.authToken);
const OTHER = authorization('AC-other-0002', 'another-token');
const MESSAGE_ADDED = `subscription($tids: [ID!]) { messageAdded(tids: $tids) { id tid body } }`;

let gateway: ServedGateway;
let url: string;
const requests: Array<{ method: string; stream: boolean }> = [];
beforeAll(async () => {
  gateway = await serveGateway();
  url = `${gateway.origin}/graphql`;
  gateway.test.app.server.on('request', (request: IncomingMessage) => {
    requests.push({
      method: request.method ?? '',
      stream: request.headers.accept === 'text/event-stream',
    });
  });
});
afterAll(() => gateway.close());
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  // Each test starts with no subscription left from the one before.
  await until(() => gateway.test.live!.stats.subscriptions === 0, 15_000);
});

function client(options: { singleConnection: boolean; headers?: Record<string, string> }): Client {
  const created = createClient({
    url,
    headers: { Authorization: DEMO },
    retryAttempts: 0,
    ...options,
  });
  cleanups.push(() => created.dispose());
  return created;
}

/**
 * Messages arrive on `tid`, one every half second, until `seen()` holds: a subscription delivers
 * only what arrives after it has read the head of the history, and on a busy machine nothing
 * outside it shows when that has happened. Resolves with the bodies sent.
 */
async function arriveUntil(tid: string, body: string, seen: () => boolean): Promise<string[]> {
  const sent: string[] = [];
  const started = Date.now();
  while (!seen()) {
    if (Date.now() - started > 30_000) throw new Error(`nothing sent to ${tid} was delivered`);
    const next = `${body} ${sent.length + 1}`;
    gateway.simulator.deliver(DEMO_CREDENTIALS.sysId, tid, next);
    sent.push(next);
    await until(seen, 500).catch(() => undefined);
  }
  return sent;
}

interface Received {
  data?: { messageAdded?: { body: string } } | null;
  errors?: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }>;
  extensions?: { resumeToken?: string };
}

// Conditions, not times: on a busy machine they take longer, so the tests may too.
describe('graphql-sse single connection mode', { timeout: 60_000 }, () => {
  it('carries a subscription and a query on one stream; a new message arrives with its resume token', async () => {
    requests.length = 0;
    const sse = client({ singleConnection: true });
    const events: Received[] = [];
    cleanups.push(
      sse.subscribe<NonNullable<Received['data']>, Received['extensions']>(
        { query: MESSAGE_ADDED, variables: { tids: [NUMBER.tid] } },
        { next: (result) => void events.push(result), error: () => {}, complete: () => {} },
      ),
    );
    const query = await new Promise<unknown>((resolve, reject) => {
      let result: unknown;
      sse.subscribe(
        { query: '{ ownedNumbers { tid } }' },
        { next: (value) => (result = value), error: reject, complete: () => resolve(result) },
      );
    });
    expect(query).toEqual({
      data: { ownedNumbers: DEMO_ACCOUNT.numbers.map((n) => ({ tid: n.tid })) },
    });

    const sent = await arriveUntil(NUMBER.tid, 'over one connection', () => events.length > 0);
    // Whatever arrived before the subscription had read the head is not sent; then each is.
    expect(sent).toContain(events[0]?.data?.messageAdded?.body);
    expect(events[0]?.extensions?.resumeToken).toMatch(/\S/);
    // One reservation and one stream; each operation a POST of its own.
    expect(requests.filter((r) => r.method === 'PUT')).toHaveLength(1);
    expect(requests.filter((r) => r.stream)).toHaveLength(1);
    expect(requests.filter((r) => r.method === 'POST' && !r.stream)).toHaveLength(2);
  });

  it('the recipe: two subscriptions on one stream, each message to its own', async () => {
    requests.length = 0;
    const sse = createLiveSseSingleClient(url, DEMO);
    cleanups.push(() => sse.dispose());
    const [first, second] = DEMO_ACCOUNT.numbers;
    const got: NewMessage[] = [];
    const errors: unknown[] = [];
    const handlers = {
      onMessage: (message: NewMessage) => void got.push(message),
      onResync: () => void errors.push('resync'),
      onError: (error: unknown) => void errors.push(error),
    };
    cleanups.push(watchOverSse(sse, [first!.tid], handlers));
    cleanups.push(watchOverSse(sse, [second!.tid], handlers));
    const onFirst = () => got.filter((m) => m.tid === first!.tid);
    const onSecond = () => got.filter((m) => m.tid === second!.tid);
    const toFirst = await arriveUntil(first!.tid, 'to the first', () => onFirst().length > 0);
    const toSecond = await arriveUntil(second!.tid, 'to the second', () => onSecond().length > 0);
    expect(toFirst).toContain(onFirst()[0]?.body);
    expect(toSecond).toContain(onSecond()[0]?.body);
    expect(errors).toEqual([]);
    expect(requests.filter((r) => r.stream)).toHaveLength(1);
  });

  it('the distinct connections mode goes on working beside it', async () => {
    const sse = client({ singleConnection: false });
    const events: Received[] = [];
    cleanups.push(
      sse.subscribe<NonNullable<Received['data']>, Received['extensions']>(
        { query: MESSAGE_ADDED, variables: { tids: [NUMBER.tid] } },
        { next: (result) => void events.push(result), error: () => {}, complete: () => {} },
      ),
    );
    const sent = await arriveUntil(NUMBER.tid, 'over its own connection', () => events.length > 0);
    expect(sent).toContain(events[0]?.data?.messageAdded?.body);
  });

  it('refuses a reservation without credentials, and a token sent with other credentials', async () => {
    const put = (headers: Record<string, string>) => fetch(url, { method: 'PUT', headers });
    const none = await put({});
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({
      errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
    });

    const reserved = await put({ authorization: DEMO });
    expect(reserved.status).toBe(201);
    const token = await reserved.text();
    const stream = (auth: string | null) =>
      fetch(url, {
        headers: {
          accept: 'text/event-stream',
          [TOKEN_HEADER_KEY]: token,
          ...(auth ? { authorization: auth } : {}),
        },
      });
    const operation = (auth: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [TOKEN_HEADER_KEY]: token,
          authorization: auth,
        },
        body: JSON.stringify({
          query: '{ ownedNumbers { tid } }',
          extensions: { operationId: '1' },
        }),
      });
    expect((await stream(OTHER)).status).toBe(403);
    expect((await stream(null)).status).toBe(401);
    expect((await operation(OTHER)).status).toBe(403);
    // Through the query string, as an EventSource would send it, the same holds.
    const byQuery = await fetch(`${url}?token=${token}`, {
      headers: { accept: 'text/event-stream', authorization: OTHER },
    });
    expect(byQuery.status).toBe(403);
    const unknown = await fetch(url, {
      headers: { accept: 'text/event-stream', [TOKEN_HEADER_KEY]: 'made-up', authorization: DEMO },
    });
    expect(unknown.status).toBe(404);

    // The owner opens it and runs an operation on it.
    const opened = await stream(DEMO);
    expect(opened.status).toBe(200);
    expect((await operation(DEMO)).status).toBe(202);
    const reader = opened.body!.getReader();
    let text = '';
    while (!text.includes('event: complete')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain(NUMBER.tid);
    await reader.cancel();
  });

  it('a token is good for one stream: once it has ended, the token is unknown', async () => {
    const token = await (
      await fetch(url, { method: 'PUT', headers: { authorization: DEMO } })
    ).text();
    const headers = { accept: 'text/event-stream', [TOKEN_HEADER_KEY]: token, authorization: DEMO };
    const first = await fetch(url, { headers });
    expect(first.status).toBe(200);
    await first.body!.cancel();
    // 409 (still open) until the gateway has seen the client go; never a second stream.
    const statuses: number[] = [];
    await untilAsync(async () => {
      const again = await fetch(url, { headers });
      await again.body?.cancel();
      statuses.push(again.status);
      return again.status === 404;
    }, 15_000);
    expect(statuses.filter((s) => s !== 409 && s !== 404)).toEqual([]);
  });
});

describe('graphql-sse single connection mode on shutdown', { timeout: 60_000 }, () => {
  it('ends the stream without `complete`, so the client reconnects; new reservations are refused', async () => {
    const closing = await serveGateway();
    const at = `${closing.origin}/graphql`;
    try {
      const token = await (
        await fetch(at, { method: 'PUT', headers: { authorization: DEMO } })
      ).text();
      const stream = await fetch(at, {
        headers: { accept: 'text/event-stream', [TOKEN_HEADER_KEY]: token, authorization: DEMO },
      });
      const posted = await fetch(at, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [TOKEN_HEADER_KEY]: token,
          authorization: DEMO,
        },
        body: JSON.stringify({
          query: MESSAGE_ADDED,
          variables: { tids: [NUMBER.tid] },
          extensions: { operationId: 'live' },
        }),
      });
      expect(posted.status).toBe(202);
      await until(() => closing.test.live!.stats.subscriptions === 1, 30_000);
      const ended = closing.test.app.endStreams();
      let text = '';
      const reader = stream.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      await ended;
      expect(text).not.toContain('event: complete');
      const late = await fetch(at, { method: 'PUT', headers: { authorization: DEMO } });
      expect(late.status).toBe(503);
    } finally {
      await closing.close();
    }
  });

  it("graphql-sse's client takes the ended stream as a network error and reconnects", async () => {
    const closing = await serveGateway();
    const reconnects: boolean[] = [];
    const outcomes: string[] = [];
    const sse = createClient({
      url: `${closing.origin}/graphql`,
      headers: { Authorization: DEMO },
      singleConnection: true,
      retryAttempts: 2,
      retry: () => new Promise((resolve) => setTimeout(resolve, 50)),
      on: { connecting: (reconnecting) => void reconnects.push(reconnecting) },
    });
    cleanups.push(() => sse.dispose());
    try {
      sse.subscribe(
        { query: MESSAGE_ADDED, variables: { tids: [NUMBER.tid] } },
        {
          next: () => undefined,
          error: () => void outcomes.push('error'),
          complete: () => void outcomes.push('complete'),
        },
      );
      // The stream is open and the subscription runs on it.
      await until(() => closing.test.live!.stats.subscriptions === 1, 30_000);
      await closing.test.app.endStreams();
      // The copy refuses new reservations while it closes: the client retries, never completes.
      await until(() => reconnects.includes(true), 30_000);
      expect(outcomes).not.toContain('complete');
    } finally {
      await closing.close();
    }
  });
});

describe(
  'graphql-sse reservations hold slots of verified accounts only',
  { timeout: 60_000 },
  () => {
    it('refuses invented pairs (one call each), and holds an account to its share', async () => {
      const served = await serveGateway({ live: { pollMs: 1_000, maxPerAccount: 2 } });
      try {
        const put = (auth: string) =>
          fetch(`${served.origin}/graphql`, { method: 'PUT', headers: { authorization: auth } });
        served.simulator.resetCalls();
        for (let pair = 0; pair < 5; pair += 1) {
          for (let again = 0; again < 2; again += 1) {
            const refused = await put(authorization(`AC-made-up-${pair}`, 'invented'));
            expect(refused.status).toBe(401);
            expect(await refused.json()).toMatchObject({
              errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
            });
          }
        }
        // Each invented pair cost the service its one verification; the second try none.
        expect(served.simulator.calls.filter((call) => call.accountSysId === null)).toHaveLength(5);
        expect((await put(DEMO)).status).toBe(201);
        expect((await put(DEMO)).status).toBe(201);
        const third = await put(DEMO);
        expect(third.status).toBe(429);
        expect(await third.json()).toMatchObject({
          errors: [{ message: expect.stringMatching(/already holds 2 streams/) }],
        });
      } finally {
        await served.close();
      }
    });
  },
);
