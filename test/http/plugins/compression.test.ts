/** Compressed answers: gzip for the clients that ask, and only where it pays. */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { chooseEncoding, COMPRESSED_ENCODINGS } from '../../../src/http/plugins/compression.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { basicAuth, sharedStack } from '../../fixtures/harness.js';

const stack = sharedStack();

const auth = basicAuth(DEMO_CREDENTIALS);

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
    expect(chooseEncoding('gzip, deflate, br', COMPRESSED_ENCODINGS)).toBe('gzip');
    expect(chooseEncoding('br, deflate', COMPRESSED_ENCODINGS)).toBe('deflate');
    expect(chooseEncoding('gzip;q=0, deflate;q=0.5', COMPRESSED_ENCODINGS)).toBe('deflate');
    expect(chooseEncoding('*', COMPRESSED_ENCODINGS)).toBe('gzip');
    expect(chooseEncoding('br', COMPRESSED_ENCODINGS)).toBeNull();
    expect(chooseEncoding('identity', COMPRESSED_ENCODINGS)).toBeNull();
    expect(chooseEncoding(null, COMPRESSED_ENCODINGS)).toBeNull();
  });
});
