/**
 * Past the byte ceiling (src/graph/response-budget.ts), a request refuses every later list with
 * one error: thousands of lists left out cost no GraphQLError and stack trace each.
 */
import { describe, expect, it } from 'vitest';
import { createResponseBudget } from '../../src/graph/response-budget.js';

describe('refusals past the ceiling', () => {
  it('are one error per request, however many lists are refused', () => {
    const budget = createResponseBudget(100);
    const thrown: unknown[] = [];
    const attempt = (fn: () => void) => {
      try {
        fn();
      } catch (error) {
        thrown.push(error);
      }
    };
    attempt(() => budget.chargeList([{ body: 'x'.repeat(200) }]));
    for (let i = 0; i < 1_000; i += 1) attempt(() => budget.check());
    attempt(() => budget.chargeList([]));
    expect(thrown).toHaveLength(1_002);
    expect(new Set(thrown).size).toBe(1);
    expect((thrown[0] as { extensions?: { code?: string } }).extensions?.code).toBe(
      'RESPONSE_TOO_LARGE',
    );
  });
});
