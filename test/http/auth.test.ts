/** Credentials: both header styles, and refusal before any upstream call. */
import { describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, execute, executeText, pairAuth, sharedStack } from '../fixtures/harness.js';
import { OwnedNumbersQuery } from '../fixtures/operations.js';

const stack = sharedStack({}, {}, { resetCalls: true });

describe('credentials', () => {
  it('Basic and X-Sys-Id/X-Auth-Token reach the same account', async () => {
    const basic = await execute(stack.gateway, OwnedNumbersQuery, {}, basicAuth(DEMO_CREDENTIALS));
    const pair = await execute(stack.gateway, OwnedNumbersQuery, {}, pairAuth(DEMO_CREDENTIALS));
    expect(basic.body.errors).toBeUndefined();
    expect(basic.body.data?.ownedNumbers?.length).toBeGreaterThan(0);
    expect(pair.body).toEqual(basic.body);
    expect(stack.simulator.calls.map((c) => c.accountSysId)).toEqual([
      DEMO_CREDENTIALS.sysId,
      DEMO_CREDENTIALS.sysId,
    ]);
  });

  it('different accounts see their own numbers', async () => {
    const first = await execute(stack.gateway, OwnedNumbersQuery, {}, basicAuth(DEMO_CREDENTIALS));
    const second = await execute(
      stack.gateway,
      OwnedNumbersQuery,
      {},
      pairAuth(SECOND_DEMO_CREDENTIALS),
    );
    const firstTids = new Set(first.body.data?.ownedNumbers?.map((n) => n.tid));
    const secondTids = second.body.data?.ownedNumbers?.map((n) => n.tid) ?? [];
    expect(secondTids.length).toBeGreaterThan(0);
    expect(secondTids.filter((tid) => firstTids.has(tid))).toEqual([]);
  });

  it.each([
    ['no headers', {}, /Credentials required/],
    [
      'a Bearer token',
      { authorization: 'Bearer abc' },
      /Malformed credentials: Authorization header must be "Basic "/,
    ],
    [
      'Basic without a colon',
      { authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` },
      /sys_id:auth_token/,
    ],
    ['only X-Sys-Id', { 'x-sys-id': DEMO_CREDENTIALS.sysId }, /must be sent together/],
  ])(
    'refuses %s with UNAUTHENTICATED and makes no upstream call',
    async (_name, headers, message) => {
      const { status, body } = await execute(stack.gateway, OwnedNumbersQuery, {}, headers);
      expect(status).toBe(200);
      expect(body.data).toEqual({ ownedNumbers: null });
      expect(body.errors).toHaveLength(1);
      expect(body.errors?.[0]).toMatchObject({
        path: ['ownedNumbers'],
        extensions: { code: 'UNAUTHENTICATED' },
      });
      expect(body.errors?.[0]?.message).toMatch(message);
      expect(stack.simulator.calls).toHaveLength(0);
    },
  );

  it('passes the upstream refusal of wrong credentials on as UNAUTHENTICATED, without the token', async () => {
    const wrong = { sysId: DEMO_CREDENTIALS.sysId, authToken: 'wrong-token-S3CR3T' };
    const { body } = await execute(stack.gateway, OwnedNumbersQuery, {}, basicAuth(wrong));
    expect(body.errors?.[0]).toMatchObject({
      message: 'The SMS service refused the credentials',
      extensions: { code: 'UNAUTHENTICATED' },
    });
    expect(JSON.stringify(body)).not.toMatch(/S3CR3T|demo-token/);
    expect(stack.simulator.calls).toHaveLength(1);
  });

  it('serves introspection without credentials', async () => {
    const { status, body } = await executeText(
      stack.gateway,
      '{ __schema { queryType { name } } __type(name: "Number") { name } }',
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      data: { __schema: { queryType: { name: 'Query' } }, __type: { name: 'Number' } },
    });
    expect(stack.simulator.calls).toHaveLength(0);
  });
});
