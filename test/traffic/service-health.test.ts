/**
 * The service's own breaker (src/traffic/service-health.ts), at a real loopback upstream: faults
 * from two accounts open it, it then fails fast for every account, and a probe closes it again.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { execute, type TestGatewayOptions } from '../fixtures/harness.js';
import { OwnedNumbersQuery } from '../fixtures/operations.js';
import { scriptedStacks } from '../fixtures/scripted-stack.js';
import { accountScript } from '../../support/scripted-upstream.js';

const auth = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok' };
const healthy = accountScript(['T-A', 'T-B']);
const stacks = scriptedStacks({ timeoutMs: 250 });
/** A gateway over an upstream whose behaviour the test switches with `setReply`. */
const switchable = (options?: TestGatewayOptions) => stacks.start(healthy, options);

describe('the service breaker', () => {
  const other = { 'x-sys-id': 'AC-2', 'x-auth-token': 'tok2' };

  it('the service breaker opens on faults from two accounts, fails fast for all, then probes back', async () => {
    const stack = await switchable({
      resilience: { retries: 0, breakerThreshold: 3, breakerCooldownMs: 300 },
    });
    stack.setReply(() => ({ status: 503, text: '' }));
    // The first fault is one account's; from the second account's on, they count for the service.
    for (const headers of [auth, other, auth, other]) {
      await execute(stack.gateway, OwnedNumbersQuery, {}, headers);
    }
    expect(stack.calls()).toBe(4);
    expect(stack.client.breakerState()).toBe('open');

    const third = { 'x-sys-id': 'AC-3', 'x-auth-token': 'tok3' };
    const fast = await execute(stack.gateway, OwnedNumbersQuery, {}, third);
    expect(fast.body).toMatchObject({
      data: { ownedNumbers: null },
      errors: [
        {
          message: 'The SMS service is failing; calls to it are paused for up to 1 s',
          extensions: { code: 'UPSTREAM_UNAVAILABLE' },
        },
      ],
    });
    expect(stack.calls()).toBe(4);

    stack.setReply(healthy);
    // Past the cooldown by the clock the breaker reads (Date), not by waiting: it half-opens on
    // the next call after it, with no event to wait for.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    vi.setSystemTime(Date.now() + 350);
    const probe = await execute(stack.gateway, OwnedNumbersQuery, {}, third);
    expect(probe.body.errors).toBeUndefined();
    expect(stack.client.breakerState()).toBe('closed');
    expect(stack.calls()).toBe(5);
  });
});
