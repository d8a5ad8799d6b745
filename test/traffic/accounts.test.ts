/**
 * What a copy remembers per account (src/traffic/accounts.ts): the account is the sys_id, so
 * every token of one sys_id shares its 429 window and its breaker, and a recovering account's
 * breaker lets a few calls through at once. Exact upstream call counts at a real loopback upstream.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { execute, type TestGatewayOptions } from '../fixtures/harness.js';
import { OwnedNumbersQuery } from '../fixtures/operations.js';
import { scriptedStacks, sysIdOf, token } from '../fixtures/scripted-stack.js';
import { ownedNumbersReply, type Script } from '../../support/scripted-upstream.js';

const OK = ownedNumbersReply(['T-1']);
const stacks = scriptedStacks();

/** A gateway over `script`: its client, the calls made for a sys_id, and a query's answer. */
async function stack(script: Script, options: TestGatewayOptions) {
  const s = await stacks.start(script, options);
  return {
    client: s.client,
    calls: (sysId: string) => s.calls((call) => sysIdOf(call) === sysId),
    owned: async (headers: Record<string, string>) =>
      (await execute(s.gateway, OwnedNumbersQuery, {}, headers)).body,
  };
}

describe('the account is the sys_id', () => {
  it("five tokens of one failing sys_id are one failing account: the service's breaker stays closed", async () => {
    const s = await stack((call) => (sysIdOf(call) === 'AC-A' ? { status: 503, json: {} } : OK), {
      resilience: { breakerThreshold: 3, breakerCooldownMs: 60_000 },
    });
    for (let i = 0; i < 5; i += 1) await s.owned(token('AC-A', i));
    // Three faults opened AC-A's own breaker; the last two tokens were refused without a call.
    expect(s.calls('AC-A')).toBe(3);
    expect(s.client.breakerState()).toBe('closed');
    expect(s.client.accountStates().breakerOpen).toBe(1);
    expect((await s.owned(token('AC-C', 0))).errors).toBeUndefined();
    expect(s.calls('AC-C')).toBe(1);
  });

  it("a new token per request cannot walk through its sys_id's 429 window", async () => {
    const s = await stack(
      (call) =>
        sysIdOf(call) === 'AC-A' ? { status: 429, text: '', headers: { 'retry-after': '30' } } : OK,
      { traffic: { initialConcurrency: 16, minConcurrency: 2 } },
    );
    for (let i = 0; i < 20; i += 1) {
      expect((await s.owned(token('AC-A', i))).errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    }
    expect(s.calls('AC-A')).toBe(1);
    expect(s.client.accountStates().rateLimited).toBe(1);
    // The 429 is about AC-A alone: the shared limit is untouched, AC-B goes straight through.
    expect(s.client.concurrency().limit).toBe(16);
    expect((await s.owned(token('AC-B', 0))).errors).toBeUndefined();
  });
});

describe("an account's breaker", () => {
  it('after recovery, an account breaker lets a few concurrent requests through, not one', async () => {
    let failing = true;
    const s = await stack(
      (call) => (sysIdOf(call) === 'AC-A' && failing ? { status: 503, json: {} } : OK),
      { resilience: { breakerThreshold: 2, breakerCooldownMs: 200 } },
    );
    await s.owned(token('AC-A', 0));
    await s.owned(token('AC-A', 0));
    failing = false;
    // Past the cooldown by the clock the breaker reads (Date), not by waiting: it half-opens on
    // the next call after it, with no event to wait for.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    vi.setSystemTime(Date.now() + 250);
    const burst = await Promise.all([0, 1, 2].map(() => s.owned(token('AC-A', 0))));
    expect(burst.map((b) => b.errors)).toEqual([undefined, undefined, undefined]);
  });
});
