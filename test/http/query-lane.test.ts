/**
 * src/http/query-lane.ts: the lane answers exactly as yoga does. Each generated request goes over
 * HTTP to two servers of one gateway, one through the lane and one through yoga alone; status,
 * the headers a client reads, the decoded body and the request's log line must match. A spy lane
 * shows which requests the lane itself answers and which it hands back to yoga.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryLane, type LaneYoga } from '../../src/http/query-lane.js';
import { issueTicket } from '../../src/traffic/ticket.js';
import type { TicketedListener } from '../../src/traffic/admitted-requests.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import { captureLogs, type CapturedLogs } from '../fixtures/captured-logs.js';
import { basicAuth, createTestGateway, type TestGateway } from '../fixtures/harness.js';

let upstream: RecordingUpstream;
let test: TestGateway;
let logs: CapturedLogs;
const servers: Server[] = [];

/** A loopback server handing each request, with its ticket, to `listener`. */
async function serve(listener: TicketedListener): Promise<string> {
  const identities = test.client.credentials.identities;
  const server = createServer((request: IncomingMessage, response: ServerResponse) =>
    listener(request, response, { ticket: issueTicket(identities, request.headers) }),
  );
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

let viaLane: string;
let viaYoga: string;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  logs = captureLogs();
  test = createTestGateway(upstream.url, { logger: logs.logger });
  viaLane = await serve(test.gateway.listener);
  viaYoga = await serve(test.gateway as unknown as TicketedListener);
});

afterAll(async () => {
  for (const server of servers) server.close();
  await test.close();
  await upstream.close();
});

const VALID = basicAuth(DEMO_CREDENTIALS);
const INVENTED = { 'x-sys-id': 'SYS_NOBODY', 'x-auth-token': 'not-a-token' };

interface Case {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** What a client can tell apart in an answer, and the log line it left. */
async function answer(url: string, sent: Case) {
  logs.lines.length = 0;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...sent.headers },
    body: sent.body,
  });
  const raw = Buffer.from(await response.arrayBuffer());
  const encoding = response.headers.get('content-encoding');
  // fetch decodes gzip and deflate itself, so what arrived encoded is decoded here only if not.
  const text = (() => {
    try {
      if (encoding === 'gzip') return gunzipSync(raw).toString();
      if (encoding === 'deflate') return inflateSync(raw).toString();
    } catch {
      // already decoded by fetch
    }
    return raw.toString();
  })();
  const line = logs.logged('request').at(-1);
  const { requestId, durationMs: _d, waitedMs: _w, time: _t, ...logged } = line ?? {};
  return {
    status: response.status,
    contentType: response.headers.get('content-type')?.toLowerCase(),
    encoding,
    vary: response.headers.get('vary'),
    requestIdEchoed: requestId === response.headers.get('x-request-id'),
    body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
    logged,
  };
}

const plainQueries = [
  { query: '{ ownedNumbers { tid number } }' },
  {
    query: 'query Mine { ownedNumbers { tid } } query Other { __typename }',
    operationName: 'Other',
  },
  { query: 'query Mine { ownedNumbers { tid } } query Other { __typename }' },
  { query: '{ ownedNumbers { tid nope } }' },
  { query: '{ ownedNumbers ' },
  { query: 'mutation { send }' },
  { query: 'subscription { messageAdded { body } }' },
  { query: '{ ownedNumbers { tid ... @defer { number } } }' },
  { query: '{ __schema { queryType { name } } }' },
  {
    query: 'query($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }',
    variables: { n: 2 },
  },
  {
    query: 'query($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }',
    variables: { n: 'two' },
  },
  {
    query: 'query($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }',
    variables: { n: 100_000 },
  },
  // Past MIN_COMPRESSED_BYTES: compressed when asked, and `Vary: Accept-Encoding` either way.
  {
    query:
      '{ ownedNumbers { tid number history(start: 0, end: 20) { messages { body sentAt } } } }',
  },
  // Past the lane's SLICED_FROM_BYTES (by the response budget's count): serialised in slices.
  { query: '{ ownedNumbers { history(start: 0, end: 400) { messages { id body sentAt } } } }' },
];

const bodies = fc.oneof(
  fc.constantFrom(...plainQueries).map((params) => JSON.stringify(params)),
  fc.constantFrom(
    JSON.stringify({ query: '{ ownedNumbers { tid } }', extensions: {} }),
    JSON.stringify([{ query: '{ ownedNumbers { tid } }' }]),
    JSON.stringify({ query: '{ ownedNumbers { tid } }', unknown: 1 }),
    JSON.stringify({ query: 42 }),
    '{"query": "{ ownedNumbers { tid } }"',
    'null',
  ),
);

const cases = fc.record({
  body: bodies,
  headers: fc
    .tuple(
      fc.constantFrom<Record<string, string>>(VALID, INVENTED, {}),
      fc.constantFrom(
        undefined,
        '*/*',
        'application/json',
        'application/graphql-response+json',
        'application/graphql-response+json, application/json;q=0.9',
        'application/json, text/event-stream',
        'multipart/mixed, application/*',
        'application/json; charset=iso-8859-1, application/graphql-response+json',
      ),
      fc.constantFrom(undefined, 'gzip', 'deflate, gzip;q=0'),
      fc.constantFrom(undefined, 'lane-test-id'),
    )
    .map(([credentials, accept, acceptEncoding, requestId]) => ({
      ...credentials,
      ...(accept ? { accept } : {}),
      ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
      ...(requestId ? { 'x-request-id': requestId } : {}),
    })),
});

describe('the plain-query lane', () => {
  it('answers every request as yoga alone does', async () => {
    // The invented pair's verdict is remembered first, so both sides meet the same memory.
    await answer(viaYoga, { body: JSON.stringify(plainQueries[0]), headers: INVENTED });
    await fc.assert(
      fc.asyncProperty(cases, async (sent) => {
        const fromLane = await answer(viaLane, sent);
        const fromYoga = await answer(viaYoga, sent);
        expect(fromLane).toEqual(fromYoga);
      }),
      { numRuns: 120 },
    );
  });

  it('runs plain queries itself and hands everything else back to yoga', async () => {
    let answered = 0;
    const spy = { onResponse: () => void (answered += 1) };
    const lane = queryLane(test.gateway as unknown as LaneYoga, {
      maxBodyBytes: 1024,
      hooks: [spy],
    });
    const url = await serve(lane);
    const post = async (body: unknown, headers: Record<string, string> = {}) => {
      const before = answered;
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...VALID, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      const json = response.headers.get('content-type')?.includes('json')
        ? (JSON.parse(text) as { data?: unknown; text?: string })
        : { text };
      return { byLane: answered > before, json, status: response.status };
    };
    const plain = { query: '{ ownedNumbers { tid } }' };
    for (const accept of [undefined, 'application/graphql-response+json, application/json;q=0.9']) {
      const ran = await post(plain, accept ? { accept } : {});
      expect(ran.byLane).toBe(true);
      expect(ran.json.data).toBeDefined();
    }
    // Not the lane's: a browser's, an event stream, APQ's extensions, a large body, invalid input.
    for (const [body, headers] of [
      [plain, { origin: 'https://app.example.com' }],
      [plain, { accept: 'text/event-stream' }],
      [{ ...plain, extensions: {} }, {}],
      [{ query: `{ ownedNumbers { tid } } # ${'x'.repeat(2_000)}` }, {}],
      ['{"query": ', {}],
      [{ query: '{ ownedNumbers { nope } }' }, {}],
    ] as const) {
      const handed = await post(body, headers);
      expect(handed.byLane).toBe(false);
      expect(handed.status).toBeLessThan(500);
    }
  });

  it('survives a client that leaves before its body ends', async () => {
    const { port } = new URL(viaLane);
    const { connect } = await import('node:net');
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      'POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"query"',
    );
    socket.destroy();
    const after = await answer(viaLane, { body: JSON.stringify(plainQueries[0]), headers: VALID });
    expect(after.status).toBe(200);
  });
});
