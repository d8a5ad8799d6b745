/**
 * APQ costs in proportion to what it is asked: it keeps only documents that parsed and
 * validated, for callers the service accepted, in a store bounded by bytes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { memoryApqStore } from '../../../src/http/plugins/apq.js';
import { DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { basicAuth, postBody, sharedStack } from '../../fixtures/harness.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const metrics = createMetrics();
const stack = sharedStack({}, { metrics });
const post = (body: string, headers: Record<string, string> = {}) =>
  postBody(stack.gateway, body, headers);
const demo = basicAuth(DEMO_CREDENTIALS);

async function registered(): Promise<number> {
  const text = await metrics.registry.metrics();
  return Number(/^sms_apq_requests_total\{result="registered"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

const hashOnly = (hash: string) =>
  JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
const register = (query: string) =>
  JSON.stringify({
    query,
    extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } },
  });

describe('APQ', () => {
  it('registers only documents that parse and validate', async () => {
    const before = await registered();
    for (const invalid of ['{ notAField }', '{ unclosed', `{ ${'a'.repeat(5_000)} }`]) {
      await post(register(invalid), demo);
      const again = await (await post(hashOnly(sha256(invalid)), demo)).json();
      expect(again.errors?.[0]?.message).toBe('PersistedQueryNotFound');
    }
    const valid = '{ ownedNumbers { tid } }';
    expect((await (await post(register(valid), demo)).json()).data).toBeDefined();
    expect((await (await post(hashOnly(sha256(valid)), demo)).json()).data).toBeDefined();
    expect(await registered()).toBe(before + 1);
  });

  it('keeps nothing for a caller without credentials, who is still answered', async () => {
    const before = await registered();
    const valid = '{ anonymous: __typename }';
    for (let i = 0; i < 2; i += 1) {
      // The protocol's retry works every time: answered, then not found by hash again.
      expect((await (await post(register(valid))).json()).data).toEqual({ anonymous: 'Query' });
      const byHash = await (await post(hashOnly(sha256(valid)))).json();
      expect(byHash.errors?.[0]?.message).toBe('PersistedQueryNotFound');
    }
    expect(await registered()).toBe(before);
  });

  it('keeps nothing for credentials the service has not accepted, and asks it nothing', async () => {
    const before = await registered();
    const invented = basicAuth({ sysId: 'AC-made-up', authToken: 'not-a-token' });
    stack.simulator.resetCalls();
    for (const query of ['{ a: __typename }', '{ b: __typename }', '{ c: __typename }']) {
      expect((await (await post(register(query), invented)).json()).data).toBeDefined();
      const byHash = await (await post(hashOnly(sha256(query)), invented)).json();
      expect(byHash.errors?.[0]?.message).toBe('PersistedQueryNotFound');
    }
    // `__typename` needs no call, and registering asks none.
    expect(stack.simulator.calls).toHaveLength(0);
    expect(await registered()).toBe(before);
  });

  it('keeps the memory store within its bytes, least recently used out', async () => {
    const store = memoryApqStore(10_000);
    for (let i = 0; i < 100; i += 1) await store.set(`h${i}`, 'x'.repeat(1_000));
    expect(await store.get('h0')).toBeNull();
    expect(await store.get('h99')).toBe('x'.repeat(1_000));
    let kept = 0;
    for (let i = 0; i < 100; i += 1) if ((await store.get(`h${i}`)) !== null) kept += 1;
    expect(kept).toBeLessThanOrEqual(10);
  });
});
