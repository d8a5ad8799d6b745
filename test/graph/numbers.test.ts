/** Owned numbers (src/graph/numbers.ts), end to end through a real simulator on loopback. */
import { describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, execute, sharedStack } from '../fixtures/harness.js';
import { OwnedNumbersQuery } from '../fixtures/operations.js';

const stack = sharedStack();
const auth = basicAuth(DEMO_CREDENTIALS);

describe('ownedNumbers', () => {
  it('lists every number with its type and webhook (empty webhook -> null)', async () => {
    const { status, body } = await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data?.ownedNumbers).toEqual(
      DEMO_ACCOUNT.numbers.map((n) => ({
        tid: n.tid,
        number: n.number,
        type: n.type.toUpperCase(),
        webhook: n.webhook === '' ? null : n.webhook,
      })),
    );
    expect(body.data?.ownedNumbers?.some((n) => n.webhook === null)).toBe(true);
  });

  it.each(['LOCAL', 'TOLLFREE'] as const)('filters by type %s', async (type) => {
    const { body } = await execute(stack.gateway, OwnedNumbersQuery, { type }, auth);
    const expected = DEMO_ACCOUNT.numbers
      .filter((n) => n.type.toUpperCase() === type)
      .map((n) => n.tid);
    expect(expected.length).toBeGreaterThan(0);
    expect(body.data?.ownedNumbers?.map((n) => n.tid)).toEqual(expected);
  });
});
