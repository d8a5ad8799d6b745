/**
 * GraphiQL as static files: a small page and content-named files, each compressed once (gzip
 * and br) and served as the kept buffers with a strong ETag, 304 when the browser holds them,
 * cached for a year when named by their hash; nothing fetched from outside the gateway.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { GRAPHIQL_ASSETS_PATH } from '../../src/http/graphiql.js';
import { basicAuth, startStack } from '../fixtures/harness.js';

let stack: Awaited<ReturnType<typeof startStack>>;
const DEMO = basicAuth(DEMO_CREDENTIALS).authorization ?? '';
beforeAll(async () => {
  stack = await startStack({}, { graphiqlHeaders: { Authorization: DEMO } });
});
afterAll(() => stack.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  stack.gateway.fetch(`http://gateway.test${path}`, { headers });

async function page(): Promise<{ html: string; files: string[] }> {
  const response = await get('/graphql', { accept: 'text/html' });
  expect(response.status).toBe(200);
  const html = await response.text();
  const files = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
  return { html, files };
}

describe('the GraphiQL page', () => {
  it('is small, names every file under the gateway, and pre-fills the query and credentials', async () => {
    const { html, files } = await page();
    expect(html.length).toBeLessThan(8_000);
    expect(html).toContain('NumbersWithLatestMessages');
    expect(html).toContain(DEMO.replace('Basic ', ''));
    expect(files).toHaveLength(5); // favicon, styles, Monaco's environment, GraphiQL, start
    for (const file of files) {
      expect(file.startsWith(GRAPHIQL_ASSETS_PATH)).toBe(true);
    }
    // Options are data, not script: nothing in them can close their <script> element.
    expect(html.match(/<script/g)).toHaveLength(4);
  });

  it('is revalidated each visit: ETag, no-cache, 304 when unchanged', async () => {
    const first = await get('/graphql', { accept: 'text/html' });
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const again = await get('/graphql', { accept: 'text/html', 'if-none-match': etag ?? '' });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });
});

describe('the GraphiQL files', () => {
  it('each have a year-long immutable cache, a strong ETag per encoding, and 304 on If-None-Match', async () => {
    const { files } = await page();
    const script = files.find((f) => /\/graphiql\.[\w-]+\.js$/.test(f)) ?? '';
    const plain = await get(script);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('content-encoding')).toBeNull();
    const source = Buffer.from(await plain.arrayBuffer());
    expect(source.length).toBeGreaterThan(1_000_000);

    const tags = new Set<string>();
    for (const [encoding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const response = await get(script, { 'accept-encoding': `${encoding}, identity` });
      expect(response.headers.get('content-encoding')).toBe(encoding);
      expect(response.headers.get('vary')).toContain('Accept-Encoding');
      const body = Buffer.from(await response.arrayBuffer());
      expect(Number(response.headers.get('content-length'))).toBe(body.length);
      expect(decode(body).equals(source)).toBe(true);
      expect(body.length).toBeLessThan(source.length / 3);
      const etag = response.headers.get('etag') ?? '';
      tags.add(etag);
      const cached = await get(script, { 'accept-encoding': encoding, 'if-none-match': etag });
      expect(cached.status).toBe(304);
    }
    tags.add(plain.headers.get('etag') ?? '');
    expect(tags.size).toBe(3); // one strong ETag per representation
    // A tag of another version is not a match.
    const stale = await get(script, { 'accept-encoding': 'br', 'if-none-match': '"old"' });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });

  it('sends the kept buffers: no compression per request, br preferred', async () => {
    const { files } = await page();
    const script = files.find((f) => /\/graphiql\.[\w-]+\.js$/.test(f)) ?? '';
    const first = Buffer.from(
      await (await get(script, { 'accept-encoding': 'gzip, deflate, br' })).arrayBuffer(),
    );
    const started = process.cpuUsage();
    for (let i = 0; i < 20; i += 1) {
      const response = await get(script, { 'accept-encoding': 'gzip, deflate, br' });
      expect(response.headers.get('content-encoding')).toBe('br');
      expect(Buffer.from(await response.arrayBuffer()).equals(first)).toBe(true);
    }
    const cpu = process.cpuUsage(started);
    // Twenty visits of a 1.3 MB file: copies, not compressions (one gzip of it is ~250 ms).
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1_000);
  });

  it('a deflate-only client gets the file as it is, never compressed on the fly', async () => {
    const { files } = await page();
    const css = files.find((f) => f.endsWith('.css')) ?? '';
    const response = await get(css, { 'accept-encoding': 'deflate' });
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(response.headers.get('content-type')).toBe('text/css; charset=utf-8');
    await response.arrayBuffer();
  });

  it('answers 404 for a name it does not serve, and 405 for a POST', async () => {
    const missing = await get(`${GRAPHIQL_ASSETS_PATH}graphiql.nope.js`);
    expect(missing.status).toBe(404);
    const post = await stack.gateway.fetch(`http://gateway.test${GRAPHIQL_ASSETS_PATH}x.js`, {
      method: 'POST',
    });
    expect(post.status).toBe(405);
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

describe('the GraphiQL page, brotli', () => {
  it.each(['br'])('is compressed with %s once and kept', async (encoding) => {
    const visit = async () => {
      const response = await stack.gateway.fetch('http://gateway.test/graphql', {
        headers: { accept: 'text/html', 'accept-encoding': encoding },
      });
      const body = Buffer.from(await response.arrayBuffer());
      return { response, body };
    };
    const first = await visit();
    expect(first.response.headers.get('content-encoding')).toBe(encoding);
    const second = await visit();
    // The same bytes: the kept compression, not a new one.
    expect(second.body.equals(first.body)).toBe(true);
  });
});
