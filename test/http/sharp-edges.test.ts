/**
 * Sharp edges: documents too large to compile, and the GraphiQL page compressed. (Operations the
 * schema cannot run, clients that cannot read parts and compressed answers are tested beside
 * their plugins, in test/http/plugins/.)
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_JIT_FIELDS } from '../../src/http/plugins/jit.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../fixtures/harness.js';

const stack = sharedStack();

const auth = basicAuth(DEMO_CREDENTIALS);

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
