/**
 * The gate's records, without a service: a refused pair is refused again without asking, a 429
 * binds the account (or, from a pair never accepted, the sys_id's unaccepted tokens alone), and
 * faults open the account's breaker.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode, UpstreamError } from '../../src/core/errors.js';
import { CallGate } from '../../src/traffic/call-gate.js';
import { CredentialMemory } from '../../src/traffic/verification.js';

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
  return { callGate, memory, refused, account: memory.account(real) };
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

describe('CallGate', () => {
  it('refuses a pair the service refused lately, without asking again', () => {
    const { callGate, refused, account } = gate();
    const unauthenticated = new UpstreamError(ErrorCode.Unauthenticated, 'refused');
    callGate.settle(unauthenticated, wrong, account, release, 5, 'ownednumbers');
    expect(codeOf(() => callGate.check(wrong, account, 0))).toBe(ErrorCode.Unauthenticated);
    expect(codeOf(() => callGate.check(real, account, 0))).toBeUndefined();
    expect(refused).toEqual(['refused_credentials']);
  });

  it('binds a 429 from a wrong token to the unaccepted tokens alone, and one from the real pair to the account', () => {
    const { callGate, account } = gate();
    callGate.answered(real, account);
    const limited = new UpstreamError(ErrorCode.RateLimited, '429', { retryAfterMs: 2_000 });
    callGate.settle(limited, wrong, account, release, 5, 'ownednumbers');
    const now = Date.now();
    expect(codeOf(() => callGate.check(wrong, account, now))).toBe(ErrorCode.RateLimited);
    expect(codeOf(() => callGate.check(real, account, now))).toBeUndefined();
    callGate.settle(limited, real, account, release, 5, 'ownednumbers');
    expect(codeOf(() => callGate.check(real, account, now))).toBe(ErrorCode.RateLimited);
    expect(codeOf(() => callGate.check(real, account, Date.now() + 2_001))).toBeUndefined();
  });

  it("opens an account's breaker after its faults in a row, and reads a timeout spent waiting here as no fault", () => {
    const { callGate, account } = gate();
    const timeout = new UpstreamError(ErrorCode.UpstreamTimeout, 'slow', { upstreamFault: true });
    callGate.settle(timeout, real, account, release, 100, 'smshistory');
    callGate.settle(timeout, real, account, release, 100, 'smshistory');
    expect(codeOf(() => callGate.check(real, account, Date.now()))).toBeUndefined();
    const fault = new UpstreamError(ErrorCode.UpstreamError, 'HTTP 502', { upstreamFault: true });
    callGate.settle(fault, real, account, release, 800, 'smshistory');
    callGate.settle(fault, real, account, release, 800, 'smshistory');
    expect(codeOf(() => callGate.check(real, account, Date.now()))).toBe(
      ErrorCode.UpstreamUnavailable,
    );
  });
});
