/**
 * Stale-if-error (RFC 5861 in spirit): when the service, not the request, made an answer fail,
 * a recent stored answer to the same request from the same account is served instead, marked
 * `extensions.stale = { ageMs }` and with a Warning header.
 */
import type { ExecutionResult } from 'graphql';
import { ErrorCode } from '../core/errors.js';

/**
 * The codes that say the service failed or is pausing us. Not UNAUTHENTICATED (refused
 * credentials must never see data), BAD_USER_INPUT or UPSTREAM_CALL_LIMIT (the request itself is
 * wrong, and would be again), nor anything masked as unexpected.
 */
const SERVICE_FAILURES: ReadonlySet<string> = new Set([
  ErrorCode.UpstreamTimeout,
  ErrorCode.UpstreamError,
  ErrorCode.UpstreamUnavailable,
  ErrorCode.RateLimited,
]);

/** RFC 7234 §5.5: 110 says the answer is stale, 111 why (the service could not be asked). */
export const STALE_WARNING = '110 - "Response is Stale", 111 - "Revalidation Failed"';

/**
 * The code of the first error when every error in `result` is the service's fault, else null.
 * Partial answers count: their stale replacement is complete and consistent, where patching the
 * fresh parts into it would mix two moments without saying which part is which.
 */
export function serviceFailureCode(result: ExecutionResult): string | null {
  const errors = result.errors ?? [];
  if (errors.length === 0) return null;
  const codes = errors.map((error) => error.extensions?.code);
  if (!codes.every((code) => typeof code === 'string' && SERVICE_FAILURES.has(code))) return null;
  return codes[0] as string;
}

/** The stored answer, marked as stale with its age. */
export function markStale(result: ExecutionResult, ageMs: number): ExecutionResult {
  return { ...result, extensions: { ...result.extensions, stale: { ageMs } } };
}

/** True for an answer this module marked: it must never be stored as a fresh one. */
export function isStale(result: ExecutionResult): boolean {
  return result.extensions?.stale !== undefined;
}
