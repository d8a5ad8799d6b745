/**
 * Two accounts, thousands of concurrent requests, both header styles, one real upstream:
 * no answer may ever carry the other account's data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  SECOND_DEMO_ACCOUNT,
  SECOND_DEMO_CREDENTIALS,
  type DemoAccount,
} from '../../src/simulator/index.js';
import { basicAuth, execute, pairAuth, startStack } from '../fixtures/harness.js';
import { EveryHistoryQuery } from '../fixtures/operations.js';

const REQUESTS = 2_000;
let stack: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  // The deadline includes waiting for a slot: 16,000 calls queued at once on a loaded CI machine
  // may wait seconds. This test is about isolation, not speed.
  stack = await startStack({}, { timeoutMs: 60_000 });
});
afterAll(() => stack.close());

/** Everything that identifies one account's data in an answer. */
function fingerprint(account: DemoAccount) {
  return {
    tids: new Set(account.numbers.map((n) => n.tid)),
    messageIds: new Set(
      account.numbers.flatMap((n) => n.messages.slice(0, 3).map((m) => m.message_id)),
    ),
  };
}

describe('isolation between accounts', () => {
  it(`${REQUESTS} concurrent requests for two accounts never see each other's data`, async () => {
    const accounts = [
      { credentials: DEMO_CREDENTIALS, ...fingerprint(DEMO_ACCOUNT) },
      { credentials: SECOND_DEMO_CREDENTIALS, ...fingerprint(SECOND_DEMO_ACCOUNT) },
    ];
    const results = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const account = accounts[i % 2] ?? accounts[0]!;
        // Alternate header styles within each account too.
        const headers =
          (i >> 1) % 2 === 0 ? basicAuth(account.credentials) : pairAuth(account.credentials);
        const { body } = await execute(
          stack.gateway,
          EveryHistoryQuery,
          { start: 0, end: 3 },
          headers,
        );
        return { account, body };
      }),
    );

    let checkedMessages = 0;
    for (const { account, body } of results) {
      if (body.errors) throw new Error(JSON.stringify(body.errors.slice(0, 2)));
      const numbers = body.data?.ownedNumbers ?? [];
      expect(numbers.map((n) => n.tid).sort()).toEqual([...account.tids].sort());
      for (const number of numbers) {
        for (const message of number.history?.messages ?? []) {
          expect(account.messageIds.has(message?.id ?? '')).toBe(true);
          checkedMessages += 1;
        }
      }
    }
    expect(checkedMessages).toBeGreaterThan(REQUESTS * 5);
    // Every upstream call was made with the credentials of a request that needed it: each account
    // made its own list and history calls (identical ones in flight at once are made once,
    // shared-calls.ts), and none was made without credentials.
    const bySysId = new Map<string | null, number>();
    for (const call of stack.simulator.calls)
      bySysId.set(call.accountSysId, (bySysId.get(call.accountSysId) ?? 0) + 1);
    expect(bySysId.get(null)).toBeUndefined();
    for (const [credentials, account] of [
      [DEMO_CREDENTIALS, DEMO_ACCOUNT],
      [SECOND_DEMO_CREDENTIALS, SECOND_DEMO_ACCOUNT],
    ] as const) {
      const made = bySysId.get(credentials.sysId) ?? 0;
      expect(made).toBeGreaterThanOrEqual(1 + account.numbers.length);
      expect(made).toBeLessThanOrEqual((REQUESTS / 2) * (1 + account.numbers.length));
    }
  }, 120_000);
});
