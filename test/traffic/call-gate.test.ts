/**
 * The gate (src/traffic/call-gate.ts). Its records, without a service: a refused pair is refused
 * again without asking, a 429 binds the account (or, from a pair never accepted, the sys_id's
 * unaccepted tokens alone), and faults open the account's breaker. Then its circuit breakers at a
 * real loopback upstream, with exact call counts: an account's faults open its own breaker only,
 * and refused credentials or bad answers open none. A refusal holds no probe slot, and the pass
 * of a call let through gives back the ones it holds.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ErrorCode, UpstreamError } from '../../src/core/errors.js';
import { CallGate } from '../../src/traffic/call-gate.js';
import { CredentialMemory } from '../../src/traffic/verification.js';
import { execute, type TestGatewayOptions } from '../fixtures/harness.js';
import { OwnedNumbersQuery } from '../fixtures/operations.js';
import { scriptedStacks, sysIdOf, token } from '../fixtures/scripted-stack.js';
import { accountScript } from '../../support/scripted-upstream.js';

const real = { sysId: 'SYS_1', authToken: 'right' };
const wrong = { sysId: 'SYS_1', authToken: 'wrong' };

function gate() {
  const memory = new CredentialMemory();
  const refused: string[] = [];
  const callGate = new CallGate({
    memory,
    breakerThreshold: 2,
    breakerCooldownMs: 10_000,
    defaultRetryAfterMs: 5_000,
    attemptTimeoutMs: 1_000,
    onRefused: (reason) => refused.push(reason),
  });
  // Named once, as a call's caller is.
  const named = { real: memory.identities.of(real), wrong: memory.identities.of(wrong) };
  return { callGate, memory, refused, ...named };
}

const released: unknown[] = [];
const release = (outcome?: unknown): void => void released.push(outcome ?? 'freed');
const codeOf = (run: () => void): string | undefined => {
  try {
    run();
  } catch (error) {
    return (error as UpstreamError).code;
  }
  return undefined;
};

// The circuit breakers' tests: a gateway over a scripted upstream that answers every account.
const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok' };
const healthy = accountScript(['T-A', 'T-B']);
// A deadline no answer in these tests comes near, even on a busy machine: it is no test's claim
// (a healthy call has been seen to take over 250 ms with the CPU busy, and a retry is only made if
// it fits in what is left).
const stacks = scriptedStacks({ timeoutMs: 10_000 });
/** A gateway over an upstream whose behaviour the test switches with `setReply`. */
const switchable = (options?: TestGatewayOptions) => stacks.start(healthy, options);

describe('CallGate', () => {
  it('refuses a pair the service refused lately, without asking again', () => {
    const { callGate, refused, real, wrong } = gate();
    const unauthenticated = new UpstreamError(ErrorCode.Unauthenticated, 'refused');
    callGate.settle(unauthenticated, wrong, release, 5, 'ownednumbers');
    expect(codeOf(() => callGate.check(wrong, 0))).toBe(ErrorCode.Unauthenticated);
    expect(codeOf(() => callGate.check(real, 0))).toBeUndefined();
    expect(refused).toEqual(['refused_credentials']);
  });

  it('binds a 429 from a wrong token to the unaccepted tokens alone, and one from the real pair to the account', () => {
    const { callGate, real, wrong } = gate();
    callGate.answered(real);
    const limited = new UpstreamError(ErrorCode.RateLimited, '429', { retryAfterMs: 2_000 });
    callGate.settle(limited, wrong, release, 5, 'ownednumbers');
    const now = Date.now();
    expect(codeOf(() => callGate.check(wrong, now))).toBe(ErrorCode.RateLimited);
    expect(codeOf(() => callGate.check(real, now))).toBeUndefined();
    callGate.settle(limited, real, release, 5, 'ownednumbers');
    expect(codeOf(() => callGate.check(real, now))).toBe(ErrorCode.RateLimited);
    expect(codeOf(() => callGate.check(real, Date.now() + 2_001))).toBeUndefined();
  });

  it("opens an account's breaker after its faults in a row, and reads a timeout spent waiting here as no fault", () => {
    const { callGate, real } = gate();
    const timeout = new UpstreamError(ErrorCode.UpstreamTimeout, 'slow', { upstreamFault: true });
    callGate.settle(timeout, real, release, 100, 'smshistory');
    callGate.settle(timeout, real, release, 100, 'smshistory');
    expect(codeOf(() => callGate.check(real, Date.now()))).toBeUndefined();
    const fault = new UpstreamError(ErrorCode.UpstreamError, 'HTTP 502', { upstreamFault: true });
    callGate.settle(fault, real, release, 800, 'smshistory');
    callGate.settle(fault, real, release, 800, 'smshistory');
    expect(codeOf(() => callGate.check(real, Date.now()))).toBe(ErrorCode.UpstreamUnavailable);
  });
});

describe("the gate's probe slots", () => {
  const fault = new UpstreamError(ErrorCode.UpstreamError, 'HTTP 503', { upstreamFault: true });
  const unreachable = new UpstreamError(ErrorCode.UpstreamError, 'refused', {
    retryable: true,
    connectionFault: true,
  });
  const other = { sysId: 'SYS_2', authToken: 'right' };

  it("a refusal holds nothing: the service breaker refusing an account's probes keeps none of them", () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const { callGate, memory, refused, real } = gate();
    callGate.answered(real);
    // The account's own faults open its breaker at 0; another account's refused connections
    // open the service's at 5 s.
    vi.setSystemTime(0);
    for (let i = 0; i < 2; i += 1) callGate.settle(fault, real, release, 800, 'x');
    vi.setSystemTime(5_000);
    for (let i = 0; i < 2; i += 1)
      callGate.settle(unreachable, memory.identities.of(other), release, 800, 'x');
    expect(callGate.service.breaker.state).toBe('open');
    // The account's breaker is past its cooldown, the service's not: refused by the service's,
    // as often as a client asks, never by its own breaker.
    for (let i = 0; i < 10; i += 1) {
      expect(codeOf(() => callGate.check(real, 10_000))).toBe(ErrorCode.UpstreamUnavailable);
    }
    expect(new Set(refused)).toEqual(new Set(['service_breaker']));
    // The service's breaker half-opens: the account's probe and the service's go together.
    // (Both accounts' breakers are not closed: the other's opened on its refused connections.)
    const pass = callGate.check(real, 15_000);
    expect(callGate.accounts.counts(15_000).breakerOpen).toBe(2);
    callGate.answered(real);
    pass.release();
    expect(callGate.service.breaker.state).toBe('closed');
    expect(callGate.accounts.counts(15_000).breakerOpen).toBe(1);
  });

  it('a pass released without an outcome gives back every probe slot it held', () => {
    const { callGate, real } = gate();
    const now = Date.now();
    for (let i = 0; i < 2; i += 1) callGate.settle(fault, real, release, 800, 'x');
    const later = now + 10_001;
    // Three probes for a recovering account, then none until one comes back.
    const passes = [0, 1, 2].map(() => callGate.check(real, later));
    expect(codeOf(() => callGate.check(real, later))).toBe(ErrorCode.UpstreamUnavailable);
    passes[0]!.release();
    passes[0]!.release();
    const again = callGate.check(real, later);
    expect(codeOf(() => callGate.check(real, later))).toBe(ErrorCode.UpstreamUnavailable);
    for (const pass of [again, ...passes]) pass.release();
    expect(codeOf(() => callGate.check(real, later))).toBeUndefined();
  });
});

describe('circuit breakers', () => {
  const other = { 'x-sys-id': 'AC-2', 'x-auth-token': 'tok2' };

  it("an account's faults open its own breaker only: it fails fast, others carry on", async () => {
    const stack = await switchable({
      resilience: { retries: 0, breakerThreshold: 3, breakerCooldownMs: 10_000 },
    });
    stack.setReply((call) =>
      sysIdOf(call) === 'AC-1' ? { status: 503, text: '' } : healthy(call),
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
    stack.setReply(() => ({ status: 401, text: '' }));
    for (let i = 0; i < 4; i += 1) {
      await execute(stack.gateway, OwnedNumbersQuery, {}, token('AC-1', i));
    }
    stack.setReply(() => ({ json: { success: '0' } }));
    for (let i = 4; i < 8; i += 1) {
      await execute(stack.gateway, OwnedNumbersQuery, {}, token('AC-1', i));
    }
    expect(stack.calls()).toBe(8);
    expect(stack.client.breakerState()).toBe('closed');
    stack.setReply(healthy);
    expect((await execute(stack.gateway, OwnedNumbersQuery, {}, auth)).body.errors).toBeUndefined();
  });
});
