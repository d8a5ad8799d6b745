/**
 * The request body limit (src/http/plugins/request-body-limit.ts): refused past the limit whether the
 * size is declared (Content-Length) or only found by reading (chunked), in-process and over a
 * real socket, with yoga's own status codes and error codes.
 */
import { createServer, type Server } from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../../src/config/config.js';
import { useRequestBodyLimit } from '../../../src/http/plugins/request-body-limit.js';
import { createTestGateway } from '../../fixtures/harness.js';

const LIMIT = 200;
const yoga = createYoga({
  schema: createSchema({
    typeDefs: 'type Query { echo(text: String): String }',
    resolvers: {
      Query: { echo: (_: unknown, args: { text?: string }) => args.text ?? null },
    },
  }),
  logging: false,
  maxRequestBodySize: false,
  plugins: [useRequestBodyLimit(LIMIT)],
});

const small = JSON.stringify({ query: '{ echo(text: "hi") }' });
const large = JSON.stringify({ query: `{ echo(text: "${'x'.repeat(LIMIT)}") }` });

function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      // Several chunks, so the limit is crossed part-way through the body.
      for (let i = 0; i < bytes.length; i += 50) controller.enqueue(bytes.subarray(i, i + 50));
      controller.close();
    },
  });
}

async function post(
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
) {
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const codeOf = (body: Record<string, unknown>): unknown =>
  (body.errors as { extensions?: { code?: string } }[] | undefined)?.[0]?.extensions?.code;

describe('in-process', () => {
  it('answers a body within the limit, with or without Content-Length', async () => {
    const expected = { status: 200, body: { data: { echo: 'hi' } } };
    expect(await post(small, { 'content-length': String(small.length) })).toEqual(expected);
    expect(await post(streamOf(small))).toEqual(expected);
  });

  it('refuses a declared size over the limit with 413, before reading the body', async () => {
    const { status, body } = await post(small, { 'content-length': String(LIMIT + 1) });
    expect(status).toBe(413);
    expect(codeOf(body)).toBe('REQUEST_ENTITY_TOO_LARGE');
  });

  it('refuses an undeclared size once reading passes the limit, with 413', async () => {
    const { status, body } = await post(streamOf(large));
    expect(status).toBe(413);
    expect(codeOf(body)).toBe('REQUEST_ENTITY_TOO_LARGE');
  });

  it('refuses a Content-Length that is not one whole number with 400', async () => {
    for (const value of ['abc', '10, 10', '-1']) {
      const { status, body } = await post(small, { 'content-length': value });
      expect(status).toBe(400);
      expect(codeOf(body)).toBe('BAD_REQUEST');
    }
  });
});

describe('over a socket', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer(yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function send(body: string | Readable) {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    return {
      status: response.statusCode,
      body: (await response.body.json()) as Record<string, unknown>,
    };
  }
  // A stream body goes out with Transfer-Encoding: chunked and no Content-Length.
  function chunked(text: string): Readable {
    const parts: Buffer[] = [];
    for (let i = 0; i < text.length; i += 50) parts.push(Buffer.from(text.slice(i, i + 50)));
    return Readable.from(parts);
  }

  it('answers within the limit, declared or chunked', async () => {
    expect((await send(small)).body).toEqual({ data: { echo: 'hi' } });
    expect((await send(chunked(small))).body).toEqual({ data: { echo: 'hi' } });
  });

  it('refuses over the limit, declared or chunked', async () => {
    for (const body of [large, chunked(large)]) {
      const reply = await send(body);
      expect(reply.status).toBe(413);
      expect(codeOf(reply.body)).toBe('REQUEST_ENTITY_TOO_LARGE');
    }
  });
});

it('the gateway enforces MAX_BODY_BYTES from its limits', async () => {
  const test = createTestGateway('http://127.0.0.1:9');
  try {
    const response = await test.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(DEFAULT_LIMITS.maxBodyBytes + 1),
      },
      body: small,
    });
    expect(response.status).toBe(413);
  } finally {
    await test.close();
  }
});
