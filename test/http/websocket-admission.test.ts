/**
 * A WebSocket is one more door, not a way around the line: each `subscribe` takes its turn in the
 * same admission as an HTTP request before its document is parsed or validated, a refused one
 * answers RATE_LIMITED with retryAfter, and a query holds its place until its answer is out.
 */
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Identity } from '../../src/core/identity.js';
import type { Refusal, Release, Waiting } from '../../src/traffic/fair-admission.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { startWebSocketServer, type WebSocketServer } from '../fixtures/websocket-server.js';
import { until } from '../../support/wait.js';

/** What the admission stand-in answers next, and what it saw: the gateway's side is real. */
const turns: {
  next: 'grant' | 'refuse' | 'wait';
  asked: number;
  held: number;
  waiting: Array<(release: Release) => void>;
  /** The estimates each granted seat was priced at once its document was read. */
  priced: number[];
} = {
  next: 'grant',
  asked: 0,
  held: 0,
  waiting: [],
  priced: [],
};
function admit(_identity: Identity): Release | Waiting | Refusal {
  turns.asked += 1;
  const release = (): Release => {
    turns.held += 1;
    let freed = false;
    const free = () => {
      if (!freed) turns.held -= 1;
      freed = true;
    };
    return Object.assign(free, {
      price: (_document: object, estimate: number) => void turns.priced.push(estimate),
    });
  };
  if (turns.next === 'refuse') return { refused: 'line-full', retryAfterSeconds: 1 };
  if (turns.next === 'wait') {
    return {
      outcome: new Promise((resolve) => turns.waiting.push(() => resolve(release()))),
      cancel: () => undefined,
    };
  }
  return release();
}

let served: WebSocketServer;
let client: Client;
beforeAll(async () => {
  served = await startWebSocketServer(() => ({ admit }));
  const authorization = `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`;
  client = createClient({
    url: served.url,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: authorization },
    retryAttempts: 0,
    // One connection throughout: a new one would take its own turn at connection_init.
    lazyCloseTimeout: 60_000,
  });
});
afterAll(async () => {
  await client.dispose();
  await served.close();
});

/** One operation's outcome: its results, or the errors it failed with. */
function run(query: string): Promise<{
  data?: unknown;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
}> {
  return new Promise((resolve) => {
    let last: { data?: unknown } = {};
    client.subscribe(
      { query },
      {
        next: (value) => void (last = value as typeof last),
        error: (errors) => resolve({ errors: errors as never }),
        complete: () => resolve(last),
      },
    );
  });
}

describe('WebSocket operations pass admission', () => {
  it('each subscribe takes a turn, held by a query until its answer is out', async () => {
    turns.next = 'grant';
    const before = turns.asked;
    const answer = await run('{ ownedNumbers { tid } }');
    expect(answer).toMatchObject({ data: { ownedNumbers: expect.any(Array) } });
    // connection_init's turn, then the operation's.
    expect(turns.asked - before).toBe(2);
    await until(() => turns.held === 0);
  });

  it("a query is priced on its own seat once its document is read, by the document's estimate", async () => {
    turns.next = 'grant';
    turns.priced.length = 0;
    await run('{ ownedNumbers { tid } }');
    await run('{ ownedNumbers { tid messages(first: 50) { edges { node { id } } } } }');
    expect(turns.priced).toHaveLength(2);
    // The page of 50 messages under every number is estimated far costlier than the number list.
    expect(turns.priced[1]).toBeGreaterThan(10 * (turns.priced[0] ?? 0));
  });

  it('a refused subscribe is answered RATE_LIMITED before its document is read', async () => {
    await run('{ ownedNumbers { tid } }');
    turns.next = 'refuse';
    // An invalid document: were it parsed or validated first, its error would come instead.
    const answer = await run('{ ownedNumbers { nope } }');
    turns.next = 'grant';
    // The same error as over HTTP, less yoga's `http` status and header (a WebSocket has neither).
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED', retryAfter: 1 });
    expect(answer.errors?.[0]?.message).toMatch(
      /^The gateway is busy and .*fewer operations at once\.$/,
    );
  });

  it('a waiting subscribe runs once granted, and frees its place after', async () => {
    await run('{ ownedNumbers { tid } }');
    turns.next = 'wait';
    const pending = run('{ ownedNumbers { tid } }');
    await until(() => turns.waiting.length === 1);
    let settled = false;
    void pending.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    turns.next = 'grant';
    turns.waiting.shift()?.(() => undefined);
    expect(await pending).toMatchObject({ data: { ownedNumbers: expect.any(Array) } });
    await until(() => turns.held === 0);
  });
});
