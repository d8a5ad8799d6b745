/** HTTP surface and the less common upstream answers, through real loopback servers. */
import { describe, expect, it } from 'vitest';
import { execute, postBody, sharedStack, type TestGatewayOptions } from '../fixtures/harness.js';
import { OwnedNumbersQuery } from '../fixtures/operations.js';
import type { Script } from '../../support/scripted-upstream.js';
import { scriptedStacks, type ScriptedStack } from '../fixtures/scripted-stack.js';

const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok' };
const numbers = [
  { number: '15125550101', tid: 'L1', type: 'local', webhook: '' },
  { number: '18885550111', tid: 'T1', type: 'tollfree', webhook: 'https://hooks.example.com/t1' },
  { number: '55555', tid: 'S1', type: 'shortcode', webhook: '' },
];
const stacks = scriptedStacks();
let stack: ScriptedStack | undefined;

async function gatewayOver(reply: Script, options: TestGatewayOptions = {}) {
  stack = await stacks.start(reply, options);
  return stack.gateway;
}

describe('HTTP surface', () => {
  it('answers GraphQL over GET', async () => {
    const gateway = await gatewayOver(() => ({ json: { success: '1', data: numbers } }));
    const query = encodeURIComponent('{ ownedNumbers { tid } }');
    const response = await gateway.fetch(`http://gateway.test/graphql?query=${query}`, {
      headers: { accept: 'application/json', ...auth },
    });
    expect(await response.json()).toEqual({
      data: { ownedNumbers: numbers.map((n) => ({ tid: n.tid })) },
    });
  });
});

describe('number types', () => {
  it('lists numbers of an unrecognised type as UNKNOWN, from the full list', async () => {
    const gateway = await gatewayOver(() => ({ json: { success: '1', data: numbers } }));
    const all = await execute(gateway, OwnedNumbersQuery, {}, auth);
    expect(all.body.data?.ownedNumbers?.map((n) => n.type)).toEqual([
      'LOCAL',
      'TOLLFREE',
      'UNKNOWN',
    ]);
    const unknown = await execute(gateway, OwnedNumbersQuery, { type: 'UNKNOWN' }, auth);
    expect(unknown.body.data?.ownedNumbers?.map((n) => n.tid)).toEqual(['S1']);
    expect(stack?.upstream.calls.map((c) => c.operation)).toEqual([
      'allownednumbers',
      'allownednumbers',
    ]);
  });

  it('keeps only the requested type when the typed call returns others', async () => {
    const gateway = await gatewayOver(() => ({ json: { success: '1', data: numbers } }));
    const { body } = await execute(gateway, OwnedNumbersQuery, { type: 'TOLLFREE' }, auth);
    expect(body.data?.ownedNumbers?.map((n) => n.tid)).toEqual(['T1']);
    expect(stack?.upstream.calls.map((c) => [c.operation, c.params.get('number_type')])).toEqual([
      ['ownednumbers', 'tollfree'],
    ]);
  });
});

describe('response size', () => {
  it('refuses an upstream body over 16 MiB with UPSTREAM_ERROR', async () => {
    const huge = {
      success: '1',
      data: [{ number: '1', tid: 'x'.repeat(17 * 1024 * 1024), type: 'local', webhook: '' }],
    };
    // 17 MiB over loopback: on a busy machine that can outlast the default 2 s deadline, which
    // would answer UPSTREAM_TIMEOUT before the size was ever reached.
    const gateway = await gatewayOver(() => ({ json: huge }), { timeoutMs: 15_000 });
    const { body } = await execute(gateway, OwnedNumbersQuery, {}, auth);
    expect(body.errors?.[0]).toMatchObject({
      message: "The SMS service's allownednumbers response is larger than the 16 MiB allowed",
      extensions: { code: 'UPSTREAM_ERROR' },
    });
  });
});

const plain = sharedStack();
const post = (body: string) => postBody(plain.gateway, body, {});

describe('errors of a request that cannot be read', () => {
  it('never echo the request body (invalid JSON)', async () => {
    const response = await post('{"query": "{ x }", "secret": SECRET-TOKEN-123');
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).not.toContain('SECRET-TOKEN-123');
    expect(JSON.parse(text)).toEqual({
      errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }],
    });
  });
});
