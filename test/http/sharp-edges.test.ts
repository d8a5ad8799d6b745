/**
 * Operations the schema cannot run, clients that cannot read parts, and compressed answers:
 * clear answers, never a 500 or an empty 406.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { chooseEncoding } from '../../src/http/plugins/compression.js';
import { MAX_JIT_FIELDS } from '../../src/http/plugins/jit.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../fixtures/harness.js';

const stack = sharedStack();

const auth = basicAuth(DEMO_CREDENTIALS);

describe('operation types the schema has no root for', () => {
  it.each(['mutation { __typename }', 'mutation Save { save(id: 1) }'])(
    '%s is a 400 validation error that says why, with no upstream call',
    async (query) => {
      stack.simulator.resetCalls();
      const { status, body } = await executeText(stack.gateway, query, undefined, auth);
      expect(status).toBe(400);
      expect(body.errors).toEqual([
        expect.objectContaining({
          message:
            'This gateway has no mutations: the schema defines no mutation type. It offers queries and subscriptions.',
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        }),
      ]);
      expect(stack.simulator.calls).toHaveLength(0);
    },
  );
});

describe('@defer for a client that reads only JSON', () => {
  const query = '{ ownedNumbers { tid ... @defer { history(start: 0, end: 1) { totalCount } } } }';

  it.each(['application/json', 'application/graphql-response+json'])(
    'Accept: %s gets the whole result at once',
    async (accept) => {
      const response = await stack.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, ...auth },
        body: JSON.stringify({ query }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain(accept);
      const body = (await response.json()) as {
        data: { ownedNumbers: { tid: string; history: { totalCount: number } }[] };
      };
      expect(body.data.ownedNumbers).toEqual(
        DEMO_ACCOUNT.numbers.map((n) => ({
          tid: n.tid,
          history: { totalCount: n.messages.length },
        })),
      );
    },
  );

  it('a client that accepts multipart/mixed still gets the parts', async () => {
    const response = await stack.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', ...auth },
      body: JSON.stringify({ query }),
    });
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(await response.text()).toContain('"hasNext":true');
  });
});

describe('response compression', () => {
  const page = `{ number(tid: "${DEMO_ACCOUNT.numbers[0]!.tid}") { history(start: 0, end: 50) { messages { id body sentAt } } } }`;
  const post = (query: string, headers: Record<string, string>) =>
    stack.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...auth,
        ...headers,
      },
      body: JSON.stringify({ query }),
    });

  it('gzips a 50-message page for a client that accepts it, to a fraction of its bytes', async () => {
    const plain = Buffer.from(await (await post(page, {})).arrayBuffer());
    const response = await post(page, { 'accept-encoding': 'gzip, deflate, br' });
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const compressed = Buffer.from(await response.arrayBuffer());
    expect(gunzipSync(compressed).equals(plain)).toBe(true);
    expect(compressed.length).toBeLessThan(plain.length / 2);
  });

  it('leaves small answers, streams and clients that do not ask uncompressed', async () => {
    const small = await post('{ ownedNumbers { tid } }', { 'accept-encoding': 'gzip' });
    expect(small.headers.get('content-encoding')).toBeNull();
    const unasked = await post(page, {});
    expect(unasked.headers.get('content-encoding')).toBeNull();
    const brOnly = await post(page, { 'accept-encoding': 'br' });
    expect(brOnly.headers.get('content-encoding')).toBeNull();
    const parts = await stack.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'multipart/mixed',
        'accept-encoding': 'gzip',
        ...auth,
      },
      body: JSON.stringify({
        query: page.replace('history(', '... @defer { history(').replace(/} } }$/, '} } } }'),
      }),
    });
    expect(parts.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(parts.headers.get('content-encoding')).toBeNull();
  });

  it('says Vary: Accept-Encoding on every answer it could have compressed, asked or not', async () => {
    const varies = (response: Response) =>
      (response.headers.get('vary') ?? '').split(',').map((v) => v.trim().toLowerCase());
    const gzipped = await post(page, { 'accept-encoding': 'gzip' });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(varies(gzipped)).toContain('accept-encoding');
    // The plain variant too: a shared cache must not serve it to a client that asks for gzip.
    for (const headers of [{}, { 'accept-encoding': 'br' }] as Record<string, string>[]) {
      const plain = await post(page, headers);
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(varies(plain)).toContain('accept-encoding');
    }
    // An answer too small to compress is the same bytes for every client.
    const small = await post('{ ownedNumbers { tid } }', { 'accept-encoding': 'gzip' });
    expect(varies(small)).not.toContain('accept-encoding');
  });

  it('negotiates by q-value: gzip, else deflate, never br', () => {
    expect(chooseEncoding('gzip, deflate, br')).toBe('gzip');
    expect(chooseEncoding('br, deflate')).toBe('deflate');
    expect(chooseEncoding('gzip;q=0, deflate;q=0.5')).toBe('deflate');
    expect(chooseEncoding('*')).toBe('gzip');
    expect(chooseEncoding('br')).toBeNull();
    expect(chooseEncoding('identity')).toBeNull();
    expect(chooseEncoding(null)).toBeNull();
  });
});

describe('very large documents', () => {
  it(`run on graphql-js past ${MAX_JIT_FIELDS} fields, with the same answer as compiled ones`, async () => {
    const tid = DEMO_ACCOUNT.numbers[0]!.tid;
    const fields =
      'id systemId sentAt tid phone direction body mms mediaUrl status { code text ok raw }';
    const alias = (i: number) =>
      `h${i}: history(start: ${i}, end: ${i + 3}) { totalCount messages { ${fields} } }`;
    const aliases = Math.ceil(MAX_JIT_FIELDS / 14) + 1;
    const large = `{ number(tid: "${tid}") { ${Array.from({ length: aliases }, (_, i) => alias(i)).join(' ')} } }`;
    const big = await executeText<{ number: Record<string, unknown> }>(
      stack.gateway,
      large,
      undefined,
      auth,
    );
    expect(big.body.errors).toBeUndefined();
    for (let i = 0; i < aliases; i += 1) {
      const small = await executeText<{ number: Record<string, unknown> }>(
        stack.gateway,
        `{ number(tid: "${tid}") { ${alias(i)} } }`,
        undefined,
        auth,
      );
      expect(big.body.data?.number[`h${i}`]).toEqual(small.body.data?.number[`h${i}`]);
    }
  });
});

describe('the GraphiQL page, gzipped', () => {
  it('is gzipped once and served the same bytes on every visit', async () => {
    const visit = () =>
      stack.gateway.fetch('http://gateway.test/graphql', {
        headers: { accept: 'text/html', 'accept-encoding': 'gzip' },
      });
    const plain = await (
      await stack.gateway.fetch('http://gateway.test/graphql', { headers: { accept: 'text/html' } })
    ).text();
    const first = await visit();
    expect(first.headers.get('content-encoding')).toBe('gzip');
    const a = Buffer.from(await first.arrayBuffer());
    expect(Number(first.headers.get('content-length'))).toBe(a.length);
    expect(gunzipSync(a).toString()).toBe(plain);
    const b = Buffer.from(await (await visit()).arrayBuffer());
    expect(b.equals(a)).toBe(true);
    // The page is small now (its scripts are files of their own: test/http/graphiql.test.ts).
    expect(a.length).toBeLessThan(plain.length);
  });
});
