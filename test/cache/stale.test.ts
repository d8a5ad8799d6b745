/** Which failed answers count as the service failing, and so may be stood in for by a stale one. */
import { describe, expect, it } from 'vitest';
import { serviceFailureCode } from '../../src/cache/stale.js';

describe('serviceFailureCode', () => {
  const result = (...errorCodes: (string | undefined)[]) => ({
    data: null,
    errors: errorCodes.map((code) => ({
      message: 'x',
      extensions: code === undefined ? {} : { code },
    })) as never,
  });
  it('is the first code only when every error is the service failing', () => {
    expect(serviceFailureCode(result('UPSTREAM_TIMEOUT', 'RATE_LIMITED'))).toBe('UPSTREAM_TIMEOUT');
    expect(serviceFailureCode(result('UPSTREAM_UNAVAILABLE'))).toBe('UPSTREAM_UNAVAILABLE');
    expect(serviceFailureCode(result('UPSTREAM_ERROR', 'UNAUTHENTICATED'))).toBeNull();
    expect(serviceFailureCode(result('UPSTREAM_ERROR', 'BAD_USER_INPUT'))).toBeNull();
    expect(serviceFailureCode(result('UPSTREAM_CALL_LIMIT'))).toBeNull();
    expect(serviceFailureCode(result('UPSTREAM_ERROR', undefined))).toBeNull();
    expect(serviceFailureCode({ data: {} })).toBeNull();
  });
});
