/**
 * @defer over a real HTTP connection: the number list arrives as the first part of the
 * multipart response while the histories are still held at the upstream; they follow as
 * incremental parts once the upstream answers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/config.js';
import { createGateway, type Gateway } from '../../src/http/server.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';
import {
  accountScript,
  historyReply,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';

let upstream: ScriptedUpstream;
let test: TestGateway;
let server: Server;
let endpoint: string;
let releaseHistories: () => void = () => undefined;
const historiesHeld = new Promise<void>((resolve) => {
  releaseHistories = resolve;
});

beforeAll(async () => {
  upstream = await startScriptedUpstream(
    accountScript(['A', 'B'], (call) => ({ until: historiesHeld, reply: historyReply(call) })),
  );
  test = createTestGateway(upstream.url);
  server = createServer(test.gateway);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  releaseHistories();
  server.closeAllConnections();
  server.close();
  await test.close();
  await upstream.close();
});

/** Splits a multipart/mixed stream into JSON parts as they arrive. */
async function* parts(
  body: AsyncIterable<Buffer> | Iterable<Buffer>,
  boundary: string,
): AsyncGenerator<Record<string, unknown>> {
  let buffer = '';
  for await (const chunk of body) {
    buffer += chunk.toString('utf8');
    let index: number;
    while ((index = buffer.indexOf(`--${boundary}`)) >= 0) {
      const part = buffer.slice(0, index);
      buffer = buffer.slice(index + boundary.length + 2);
      const json = part.slice(part.indexOf('\r\n\r\n') + 4).trim();
      if (json.startsWith('{')) yield JSON.parse(json) as Record<string, unknown>;
    }
  }
}

/** A client that reads multipart answers, for account AC. */
const DEFER_HEADERS = {
  'content-type': 'application/json',
  accept: 'multipart/mixed',
  'x-sys-id': 'AC',
  'x-auth-token': 'tok',
};

describe('@defer', () => {
  it('sends the number list first and each history when the upstream answers', async () => {
    const response = await request(endpoint, {
      method: 'POST',
      headers: DEFER_HEADERS,
      body: JSON.stringify({
        query:
          '{ ownedNumbers { tid ... @defer(label: "history") { history(start: 0, end: 1) { messages { body } } } } }',
      }),
    });
    const contentType = String(response.headers['content-type']);
    expect(contentType).toMatch(/^multipart\/mixed/);
    const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1] ?? '-';
    const stream = parts(response.body, boundary);

    const first = await stream.next();
    // The histories are still held at the upstream, yet the list is here.
    expect(first.value).toEqual({
      data: { ownedNumbers: [{ tid: 'A' }, { tid: 'B' }] },
      hasNext: true,
    });

    releaseHistories();
    const incremental: unknown[] = [];
    for await (const part of stream)
      incremental.push(...((part.incremental as unknown[] | undefined) ?? []));
    expect(incremental).toEqual(
      expect.arrayContaining([
        {
          data: { history: { messages: [{ body: 'hello from A' }] } },
          path: ['ownedNumbers', 0],
          label: 'history',
        },
        {
          data: { history: { messages: [{ body: 'hello from B' }] } },
          path: ['ownedNumbers', 1],
          label: 'history',
        },
      ]),
    );
  });
});

const DEFERRED_HISTORY =
  '{ ownedNumbers { tid ... @defer { history(start: 0, end: 1) { totalCount } } } }';

/** Posts the deferred query in-process and returns the whole multipart answer's parts. */
async function deferredParts(gateway: Gateway): Promise<Record<string, unknown>[]> {
  const response = await gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: DEFER_HEADERS,
    body: JSON.stringify({ query: DEFERRED_HISTORY }),
  });
  const boundary =
    /boundary="?([^";]+)"?/.exec(response.headers.get('content-type') ?? '')?.[1] ?? '-';
  const text = Buffer.from(await response.arrayBuffer());
  const collected: Record<string, unknown>[] = [];
  for await (const part of parts([text], boundary)) collected.push(part);
  return collected;
}

const incrementalErrors = (collected: Record<string, unknown>[]) =>
  collected.flatMap((part) =>
    ((part.incremental as { errors?: unknown[] }[] | undefined) ?? []).flatMap(
      (i) => i.errors ?? [],
    ),
  );

describe('@defer errors', () => {
  it('a deferred part that fails upstream keeps its message, path and stable code', async () => {
    const failing = await startScriptedUpstream(
      accountScript(['A', 'B'], (call) =>
        call.params.get('tid') === 'B' ? { status: 503, text: 'down' } : historyReply(call),
      ),
    );
    const gateway = createTestGateway(failing.url);
    try {
      expect(incrementalErrors(await deferredParts(gateway.gateway))).toEqual([
        expect.objectContaining({
          message: 'The SMS service answered smshistory with HTTP 503',
          path: ['ownedNumbers', 1, 'history'],
          extensions: { code: 'UPSTREAM_ERROR' },
        }),
      ]);
    } finally {
      await gateway.close();
      await failing.close();
    }
  });

  it('an unexpected error in a deferred part is masked', async () => {
    const broken = createGateway({
      client: {
        allOwnedNumbers: async () => [{ tid: 'A', number: '1', type: 'LOCAL', webhook: null }],
        ownedNumbers: async () => [],
        history: () => Promise.reject(new Error('internal detail S3CR3T')),
      },
      limits: DEFAULT_LIMITS,
      logger: false,
    });
    const collected = await deferredParts(broken);
    expect(incrementalErrors(collected)).toEqual([
      expect.objectContaining({
        message: 'Unexpected error.',
        extensions: expect.objectContaining({ code: 'INTERNAL_SERVER_ERROR' }),
      }),
    ]);
    expect(JSON.stringify(collected)).not.toContain('S3CR3T');
  });
});
