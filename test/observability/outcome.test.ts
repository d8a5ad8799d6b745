/** How the request metrics label a request's result (src/observability/outcome.ts). */
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import { outcomeOf } from '../../src/observability/outcome.js';

describe('outcomeOf', () => {
  it('classifies outcomes: any error of the gateway or the service outranks a client mistake', () => {
    const error = (code: string) => ({ message: code, extensions: { code } });
    expect(outcomeOf({ data: {} })).toEqual({ outcome: 'ok', code: 'none' });
    expect(outcomeOf({ errors: [error('BAD_USER_INPUT')] })).toEqual({
      outcome: 'client_error',
      code: 'BAD_USER_INPUT',
    });
    expect(outcomeOf({ errors: [error('UNAUTHENTICATED'), error('UPSTREAM_TIMEOUT')] })).toEqual({
      outcome: 'error',
      code: 'UPSTREAM_TIMEOUT',
    });
    // A code that is none of ours cannot become a label value.
    expect(outcomeOf({ errors: [error('x'.repeat(50))] })).toEqual({
      outcome: 'error',
      code: 'INTERNAL_SERVER_ERROR',
    });
    expect(ERROR_CODES).toContain('INTERNAL_SERVER_ERROR');
  });
});
