/**
 * Upstream faults at a real loopback server: each failure mode reaches the client as a coded
 * error with partial data kept, retries and the circuit breaker behave, and the same gateway
 * answers normally once the upstream is well again.
 */
import { describe, expect, it } from 'vitest';
import { execute, type TestGatewayOptions } from '../fixtures/harness.js';
import { EveryHistoryQuery, OwnedNumbersQuery } from '../fixtures/operations.js';
import { accountScript, historyReply, ownedNumbersReply } from '../../support/scripted-upstream.js';
import type { ScriptedCall, ScriptedReply } from '../../support/scripted-upstream.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';

const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok' };
const TIDS = ['T-A', 'T-B'];
const healthy = accountScript(TIDS);
// A deadline no answer in these tests comes near, even on a busy machine: it is no test's claim
// (a healthy call has been seen to take over 250 ms with the CPU busy, and a retry is only made if
// it fits in what is left). The cases that wait for a deadline set their own, short ones.
const stacks = scriptedStacks({ timeoutMs: 10_000 });
/** A gateway over an upstream whose behaviour the test switches with `setReply`. */
const switchable = (options?: TestGatewayOptions) => stacks.start(healthy, options);

/** Fails T-B's history with `failure`; everything else answers normally. */
const historyOfBFails = (failure: ScriptedReply) =>
  accountScript(TIDS, (call) => (call.params.get('tid') === 'T-B' ? failure : healthy(call)));

describe('each failure mode, then recovery on the same gateway', () => {
  it.each([
    ['slow (under the deadline)', { delayMs: 120, json: null }, null],
    ['hanging', { hang: true }, 'UPSTREAM_TIMEOUT'],
    ['HTTP 500', { status: 500, text: 'oops' }, 'UPSTREAM_ERROR'],
    ['HTTP 503', { status: 503, text: 'busy' }, 'UPSTREAM_ERROR'],
    [
      'an HTML error page',
      { status: 502, text: '<html><body>Bad Gateway</body></html>' },
      'UPSTREAM_ERROR',
    ],
    [
      'truncated JSON',
      { text: '{"success":"1","total_mess', contentType: 'application/json' },
      'UPSTREAM_ERROR',
    ],
    ['a connection reset', { reset: true }, 'UPSTREAM_ERROR'],
    ['a body cut off mid-transfer', { cutOff: true }, 'UPSTREAM_ERROR'],
    ['success "0"', { json: { success: '0' } }, 'UPSTREAM_ERROR'],
    ['HTTP 401', { status: 401, text: '' }, 'UNAUTHENTICATED'],
    ['HTTP 403', { status: 403, text: '' }, 'UNAUTHENTICATED'],
  ] as const)('%s', async (_name, failure, code) => {
    // A hang waits for the deadline: 1 s, still room for the healthy calls after it.
    const stack = await switchable('hang' in failure ? { timeoutMs: 1_000 } : {});
    // A slow answer is the normal history, only late.
    const reply: ScriptedReply =
      'json' in failure && failure.json === null
        ? {
            ...(historyReply({
              operation: 'smshistory',
              params: new URLSearchParams({ tid: 'T-B' }),
            }) as { json: unknown }),
            delayMs: failure.delayMs,
          }
        : failure;
    stack.setReply(historyOfBFails(reply));
    const faulty = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    expect(faulty.status).toBe(200);
    expect(faulty.body.data?.ownedNumbers?.[0]?.history?.messages).toHaveLength(1);
    if (code === null) {
      expect(faulty.body.errors).toBeUndefined();
      expect(faulty.body.data?.ownedNumbers?.[1]?.history?.messages).toHaveLength(1);
    } else {
      expect(faulty.body.data?.ownedNumbers?.[1]?.history).toBeNull();
      expect(faulty.body.errors).toMatchObject([
        { path: ['ownedNumbers', 1, 'history'], extensions: { code } },
      ]);
      expect(faulty.body.errors?.[0]?.message).toMatch(/^The SMS service/);
    }

    stack.setReply(healthy);
    const after = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    expect(after.body.errors).toBeUndefined();
    expect(after.body.data?.ownedNumbers?.map((n) => n.history?.messages.length)).toEqual([1, 1]);
  });

  it('integers sent as numeric strings succeed', async () => {
    const stack = await switchable();
    stack.setReply((call) => {
      if (call.operation !== 'smshistory') return ownedNumbersReply(TIDS);
      const { json } = historyReply(call) as { json: Record<string, unknown> };
      return {
        json: {
          ...json,
          'message_count_requested ': '1',
          total_message_count: '1',
          most_recent_msg_id: '5',
        },
      };
    });
    const { body } = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 1 }, auth);
    expect(body.errors).toBeUndefined();
    expect(body.data?.ownedNumbers?.map((n) => n.history?.totalCount)).toEqual([1, 1]);
  });
});

describe('retries', () => {
  const flaky = (failures: ScriptedReply[]) => {
    let index = 0;
    return (call: ScriptedCall): ScriptedReply =>
      index < failures.length ? (failures[index++] as ScriptedReply) : healthy(call);
  };

  it.each([
    ['503', { status: 503, text: '' }],
    ['502', { status: 502, text: '' }],
    ['504', { status: 504, text: '' }],
    ['a reset', { reset: true }],
    ['a timeout', { hang: true }],
  ] as const)('retries after %s and succeeds', async (_name, failure) => {
    // A hung attempt is cut off after 500 ms, leaving the 5 s deadline room for the retries; a
    // healthy attempt must answer within the same 500 ms, so not much less on a busy machine.
    const stack = await switchable({
      timeoutMs: 5_000,
      resilience: { retries: 2, retryBaseDelayMs: 5, attemptTimeoutMs: 500 },
    });
    stack.setReply(flaky([failure, failure]));
    const { body } = await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    expect(body.errors).toBeUndefined();
    expect(body.data?.ownedNumbers?.map((n) => n.tid)).toEqual(TIDS);
    expect(stack.calls()).toBe(3);
  });

  it('gives up after the configured attempts, with the last error', async () => {
    const stack = await switchable({ resilience: { retries: 2, retryBaseDelayMs: 5 } });
    stack.setReply(() => ({ status: 503, text: '' }));
    const { body } = await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    expect(body.errors?.[0]).toMatchObject({
      message: 'The SMS service answered allownednumbers with HTTP 503',
      extensions: { code: 'UPSTREAM_ERROR' },
    });
    expect(stack.calls()).toBe(3);
  });

  it.each([
    ['500', { status: 500, text: '' }],
    ['401', { status: 401, text: '' }],
    ['success "0"', { json: { success: '0' } }],
    ['HTML', { text: '<html></html>' }],
  ] as const)('does not retry %s', async (_name, failure) => {
    const stack = await switchable({ resilience: { retries: 3, retryBaseDelayMs: 5 } });
    stack.setReply(() => failure);
    await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    expect(stack.calls()).toBe(1);
  });
});

describe('circuit breakers', () => {
  const other = { 'x-sys-id': 'AC-2', 'x-auth-token': 'tok2' };

  it("an account's faults open its own breaker only: it fails fast, others carry on", async () => {
    const stack = await switchable({
      resilience: { retries: 0, breakerThreshold: 3, breakerCooldownMs: 10_000 },
    });
    stack.setReply((call) =>
      call.params.get('sys_id') === 'AC-1' ? { status: 503, text: '' } : healthy(call),
    );
    for (let i = 0; i < 3; i += 1) await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    expect(stack.calls()).toBe(3);
    const fast = await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    expect(fast.body.errors?.[0]).toMatchObject({
      message: "The SMS service keeps failing this account's calls; they are paused for up to 10 s",
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
    expect(stack.calls()).toBe(3);
    expect(stack.client.breakerState()).toBe('closed');
    const served = await execute(stack.gateway, OwnedNumbersQuery, {}, other);
    expect(served.body.errors).toBeUndefined();
    expect(stack.calls()).toBe(4);
  });

  it('is not opened by refused credentials or bad answers for one account', async () => {
    const stack = await switchable({
      resilience: { retries: 0, breakerThreshold: 2, breakerCooldownMs: 10_000 },
    });
    // A new token each time: a refused pair is answered from memory afterwards, without a call.
    const token = (n: number) => ({ ...auth, 'x-auth-token': `tok-${n}` });
    stack.setReply(() => ({ status: 401, text: '' }));
    for (let i = 0; i < 4; i += 1) await execute(stack.gateway, OwnedNumbersQuery, {}, token(i));
    stack.setReply(() => ({ json: { success: '0' } }));
    for (let i = 4; i < 8; i += 1) await execute(stack.gateway, OwnedNumbersQuery, {}, token(i));
    expect(stack.calls()).toBe(8);
    expect(stack.client.breakerState()).toBe('closed');
    stack.setReply(healthy);
    expect((await execute(stack.gateway, OwnedNumbersQuery, {}, auth)).body.errors).toBeUndefined();
  });
});
