/**
 * A tenant is an account, the sys_id, not whatever credentials a caller makes up: one account's
 * trouble never shrinks or fills the shared capacity, refusals in the body are UNAUTHENTICATED,
 * and credentials are verified once and remembered. Exact upstream call counts at a real loopback
 * upstream. The 429 window and breaker an account's tokens share: test/traffic/accounts.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { refusesCredentials } from '../../src/upstream/wire.js';
import { createTestGateway, execute, type TestGatewayOptions } from '../fixtures/harness.js';
import { OwnedNumbersQuery } from '../fixtures/operations.js';
import {
  ownedNumbersReply,
  startScriptedUpstream,
  type ScriptedCall,
  type ScriptedReply,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';
import type { TestGateway } from '../fixtures/harness.js';
import { sysIdOf, token } from '../fixtures/scripted-stack.js';
import { subscribeSse } from '../fixtures/sse.js';
import { sleep, until } from '../../support/wait.js';

const OK = ownedNumbersReply(['T-1']);

let upstream: ScriptedUpstream | undefined;
let test: TestGateway | undefined;
afterEach(async () => {
  await test?.close();
  await upstream?.close();
  test = undefined;
  upstream = undefined;
});

async function stack(script: (call: ScriptedCall) => ScriptedReply, options: TestGatewayOptions) {
  upstream = await startScriptedUpstream(script);
  test = createTestGateway(upstream.url, options);
  const server = upstream;
  const gateway = test.gateway;
  return {
    client: test.client,
    calls: (sysId: string) => server.calls.filter((c) => sysIdOf(c) === sysId).length,
    owned: async (headers: Record<string, string>) =>
      (await execute(gateway, OwnedNumbersQuery, {}, headers)).body,
  };
}

describe('refused credentials are remembered for queries', () => {
  it('the same invented pair sent 100 times as a query costs the service one call', async () => {
    const s = await stack(
      (call) =>
        sysIdOf(call) === 'AC-made-up'
          ? { json: { success: '0', error: 'Invalid credentials' } }
          : OK,
      {},
    );
    for (let i = 0; i < 100; i += 1) {
      const body = await s.owned(token('AC-made-up', 0));
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect(s.calls('AC-made-up')).toBe(1);
    // Another token of the same sys_id is another pair: asked once, then remembered too.
    await s.owned(token('AC-made-up', 1));
    await s.owned(token('AC-made-up', 1));
    expect(s.calls('AC-made-up')).toBe(2);
    expect((await s.owned(token('AC-B', 0))).errors).toBeUndefined();
  });
});

describe('shared capacity is immune to one account', () => {
  it("one account's hung calls leave the reserve free, never shrink the limit nor open the service's breaker", async () => {
    let hungCalls = 0;
    const s = await stack(
      (call) => {
        if (sysIdOf(call) !== 'AC-A') return OK;
        hungCalls += 1;
        return { hang: true };
      },
      {
        // Long enough that AC-B's answer comes while AC-A's calls still hang, however busy the
        // machine: the test waits for conditions, not for a time.
        timeoutMs: 2_000,
        resilience: { connections: 8, breakerThreshold: 2, breakerCooldownMs: 60_000 },
        traffic: { initialConcurrency: 8, minConcurrency: 2 },
      },
    );
    let settled = 0;
    const hung = Array.from({ length: 40 }, (_, i) =>
      s.owned(token('AC-A', i)).finally(() => (settled += 1)),
    );
    // Alone, AC-A may use every slot but the reserve (1 of 8): seven of its calls reach the
    // service, and no more while they hang.
    await until(() => hungCalls >= 7, 5_000);
    expect((await s.owned(token('AC-B', 0))).errors).toBeUndefined();
    // AC-B was answered while every one of AC-A's calls still hung, and no eighth one went out.
    expect(settled).toBe(0);
    expect(hungCalls).toBe(7);
    const answers = await Promise.all(hung);
    expect(answers.every((a) => a.errors?.[0]?.extensions?.code !== undefined)).toBe(true);
    expect(s.client.concurrency().limit).toBe(8);
    expect(s.client.breakerState()).toBe('closed');
    expect((await s.owned(token('AC-C', 0))).errors).toBeUndefined();
  }, 10_000);
});

describe('refusals in the body', () => {
  it('HTTP 200 with success "0" and an error about the credentials is UNAUTHENTICATED', async () => {
    const s = await stack(() => ({ json: { success: '0', error: 'Invalid credentials' } }), {});
    const body = await s.owned(token('AC-A', 0));
    expect(body.errors?.[0]).toMatchObject({
      message: 'The SMS service refused the credentials',
      extensions: { code: 'UNAUTHENTICATED' },
    });
  });

  it('tells credential refusals from other failures by their error text', () => {
    for (const text of [
      'Invalid credentials',
      'invalid auth_token',
      'Unknown sys_id',
      'Authentication failed',
      'token revoked',
      'account suspended',
    ]) {
      expect(refusesCredentials(text), text).toBe(true);
    }
    for (const text of ['number not found', 'invalid history range', '', undefined, 42]) {
      expect(refusesCredentials(text), String(text)).toBe(false);
    }
  });
});

describe('verification', () => {
  it('one cheap call for unknown credentials, remembered; refusals remembered too; concurrent checks share the call', async () => {
    const s = await stack(
      (call) => (call.params.get('auth_token') === 'good' ? OK : { status: 401, text: '' }),
      {},
    );
    const good = { sysId: 'AC-A', authToken: 'good' };
    const bad = { sysId: 'AC-B', authToken: 'bad' };
    expect(await Promise.all(Array.from({ length: 10 }, () => s.client.verify(good)))).toEqual(
      Array.from({ length: 10 }, () => true),
    );
    expect(await s.client.verify(good)).toBe(true);
    expect(s.calls('AC-A')).toBe(1);
    expect(upstream?.calls[0]?.operation).toBe('ownednumbers');
    expect(await s.client.verify(bad)).toBe(false);
    expect(await s.client.verify(bad)).toBe(false);
    expect(s.calls('AC-B')).toBe(1);
    // Any answered call is an acceptance: a request verifies its credentials for free.
    await s.owned({ 'x-sys-id': 'AC-C', 'x-auth-token': 'good' });
    expect(await s.client.verify({ sysId: 'AC-C', authToken: 'good' })).toBe(true);
    expect(s.calls('AC-C')).toBe(1);
  });
});

describe('a live subscription with refused credentials', () => {
  const POLL_MS = 40;
  const ADDED = 'subscription { messageAdded(tids: ["T-1"]) { id } }';
  const REFUSED = { 'x-sys-id': 'AC-GONE', 'x-auth-token': 'revoked' };
  const GOOD = { 'x-sys-id': 'AC-OK', 'x-auth-token': 'fine' };

  it('is refused over SSE with UNAUTHENTICATED and holds nothing: no poll loop, no slot', async () => {
    upstream = await startScriptedUpstream((call) => {
      if (sysIdOf(call) === 'AC-GONE') {
        // The service answers revoked credentials as a refusal in the body, with HTTP 200.
        return { json: { success: '0', error: 'Invalid credentials' } };
      }
      return call.operation === 'smshistory'
        ? { json: { success: '1', messages: [], total: 0 } }
        : OK;
    });
    test = createTestGateway(upstream.url, { live: { pollMs: POLL_MS } });
    const server = upstream;
    const live = test.live;
    if (!live) throw new Error('live subscriptions are off');
    const callsOf = (sysId: string) => server.calls.filter((c) => sysIdOf(c) === sysId);

    for (let attempt = 0; attempt < 3; attempt += 1) {
      const stream = await subscribeSse(test.gateway, ADDED, REFUSED);
      await stream.waitFor(1);
      await sleep(POLL_MS * 2);
      expect(stream.events).toHaveLength(1);
      expect(stream.events[0]?.errors?.[0]).toMatchObject({
        message:
          'The SMS service refused these credentials: a live subscription needs credentials it accepts',
        extensions: { code: 'UNAUTHENTICATED' },
      });
      expect(stream.done()).toBe(true);
      stream.close();
    }
    await sleep(POLL_MS * 4);
    // One verification call for the pair, then its refusal is remembered: no poll, no more calls.
    expect(callsOf('AC-GONE').map((c) => c.operation)).toEqual(['ownednumbers']);
    expect(live.stats).toEqual({ topics: 0, subscriptions: 0, locksHeld: 0 });

    // The same gateway holds and polls for accepted credentials (so the above can fail).
    const held = await subscribeSse(test.gateway, ADDED, GOOD);
    await until(() => callsOf('AC-OK').filter((c) => c.operation === 'smshistory').length > 1);
    expect(live.stats).toMatchObject({ topics: 1, subscriptions: 1 });
    held.close();
  });
});
