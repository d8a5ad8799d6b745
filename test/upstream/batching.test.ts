/** The batching rules of design.md, asserted as exact upstream call counts at a real simulator. */
import { describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, execute, sharedStack } from '../fixtures/harness.js';
import {
  EveryHistoryQuery,
  EveryNumberNeedQuery,
  LocalTwiceQuery,
  OwnedNumbersQuery,
  RepeatedHistoryQuery,
} from '../fixtures/operations.js';

const LATENCY_MS = 40;
const stack = sharedStack({ latencyMs: LATENCY_MS }, {}, { resetCalls: true });

const auth = basicAuth(DEMO_CREDENTIALS);
const operations = () => stack.simulator.calls.map((c) => c.operation);
const [firstNumber, secondNumber] = DEMO_ACCOUNT.numbers;

describe('owned-number needs', () => {
  it('serves LOCAL, TOLLFREE, all and several number(tid) from one allownednumbers call', async () => {
    const { body } = await execute(
      stack.gateway,
      EveryNumberNeedQuery,
      { first: firstNumber?.tid ?? '', second: secondNumber?.tid ?? '', missing: 'TN-NONE' },
      auth,
    );
    expect(body.errors).toBeUndefined();
    expect(operations()).toEqual(['allownednumbers']);
    expect(body.data?.local?.every((n) => n.type === 'LOCAL')).toBe(true);
    expect(body.data?.tollfree?.every((n) => n.type === 'TOLLFREE')).toBe(true);
    expect(body.data?.all).toHaveLength(DEMO_ACCOUNT.numbers.length);
    expect(body.data?.first?.tid).toBe(firstNumber?.tid);
    expect(body.data?.second?.tid).toBe(secondNumber?.tid);
    expect(body.data?.missing).toBeNull();
  });

  it('uses the one typed call when only one type is needed, however often', async () => {
    await execute(stack.gateway, LocalTwiceQuery, {}, auth);
    expect(stack.simulator.calls.map((c) => [c.operation, c.params.number_type])).toEqual([
      ['ownednumbers', 'local'],
    ]);
  });

  it('makes no call shared across requests', async () => {
    await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    await execute(stack.gateway, OwnedNumbersQuery, {}, auth);
    expect(operations()).toEqual(['allownednumbers', 'allownednumbers']);
  });
});

describe('history calls', () => {
  it('makes identical history calls once, and merges touching ranges of one number', async () => {
    const { body } = await execute(
      stack.gateway,
      RepeatedHistoryQuery,
      { tid: firstNumber?.tid ?? '' },
      auth,
    );
    expect(body.errors).toBeUndefined();
    const histories = stack.simulator.calls.filter((c) => c.operation === 'smshistory');
    // (first, 0..5) is asked for three times and (first, 5..10) once: one call for 0..10.
    // Every other number: one call for 0..5.
    expect(histories).toHaveLength(DEMO_ACCOUNT.numbers.length);
    const keys = histories.map(
      (c) => `${c.params.tid}:${c.params.history_start}-${c.params.history_end}`,
    );
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain(`${firstNumber?.tid}:0-10`);
    const again = body.data?.again;
    expect(again?.next?.messages).toHaveLength(5);
    expect(again?.same?.messages.map((m) => m?.id)).not.toEqual(
      again?.next?.messages.map((m) => m?.id),
    );
    expect(operations().filter((o) => o !== 'smshistory')).toEqual(['allownednumbers']);
  });

  it('runs history calls concurrently, all at once while the service keeps up', async () => {
    stack.simulator.resetLoad();
    const started = performance.now();
    const { body } = await execute(stack.gateway, EveryHistoryQuery, { start: 0, end: 2 }, auth);
    const elapsed = performance.now() - started;
    expect(body.errors).toBeUndefined();
    const count = DEMO_ACCOUNT.numbers.length;
    expect(operations()).toEqual(['allownednumbers', ...Array<string>(count).fill('smshistory')]);
    // No per-request ceiling: the service saw every history in flight at once (counted there,
    // not by a stopwatch), and the whole query took two round trips, not one per number.
    expect(stack.simulator.load().peakInFlight).toBe(count);
    expect(elapsed).toBeGreaterThanOrEqual(2 * LATENCY_MS * 0.9);
  });
});
