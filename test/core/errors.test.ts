/** Upstream failures and what a client is shown of them (src/core/errors.ts). */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  retryAfterSeconds,
  UpstreamError,
  upstreamErrorToGraphQL,
} from '../../src/core/errors.js';

describe('UpstreamError', () => {
  it("counts a retryable failure as the service's fault unless told otherwise", () => {
    const transient = new UpstreamError(ErrorCode.UpstreamError, 'reset', { retryable: true });
    expect(transient.upstreamFault).toBe(true);
    const told = { retryable: true, upstreamFault: false };
    expect(new UpstreamError(ErrorCode.UpstreamError, 'reset', told).upstreamFault).toBe(false);
    const refused = new UpstreamError(ErrorCode.Unauthenticated, 'refused');
    expect([refused.retryable, refused.upstreamFault, refused.connectionFault]).toEqual([
      false,
      false,
      false,
    ]);
    expect(refused.cause).toBeUndefined();
  });
});

describe('upstreamErrorToGraphQL', () => {
  it("keeps an upstream failure's message, code and path, and its wait in whole seconds", () => {
    const failure = new UpstreamError(ErrorCode.RateLimited, 'Slow down', { retryAfterMs: 1_200 });
    const shown = upstreamErrorToGraphQL(
      new GraphQLError('wrapped', { path: ['number', 'history'], originalError: failure }),
    );
    expect(shown?.toJSON()).toEqual({
      message: 'Slow down',
      path: ['number', 'history'],
      extensions: { code: 'RATE_LIMITED', retryAfter: 2 },
    });
    // Kept, never serialised, so stale-if-error can tell an outage from an answer.
    expect(shown?.originalError).toBe(failure);
  });

  it("leaves any other error to the caller's masking", () => {
    const other = new GraphQLError('wrapped', { originalError: new Error('a secret detail') });
    expect(upstreamErrorToGraphQL(other)).toBeNull();
  });
});

describe('retryAfterSeconds', () => {
  it.each([
    [0, 1],
    [1, 1],
    [1_000, 1],
    [1_001, 2],
    [59_500, 60],
  ])('%s ms -> %s s, never 0', (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds);
  });
});
