/**
 * Stale-if-error (RFC 5861 in spirit): when the service, not the request, made an answer fail,
 * a recent stored answer to the same request from the same account is served instead, marked
 * `extensions.stale = { ageMs }` and with a Warning header.
 */
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { ErrorCode, UpstreamError } from '../core/errors.js';

/**
 * The codes that say the service is out or pausing us. UPSTREAM_ERROR counts only as an outage
 * (`upstreamFault`: a 5xx, a failed or cut connection), not when the service answered about the
 * request itself. Never UNAUTHENTICATED (refused credentials must never see data) nor the
 * request's own mistakes (docs/stale-if-error.md).
 */
const OUTAGES: ReadonlySet<string> = new Set([
  ErrorCode.UpstreamTimeout,
  ErrorCode.UpstreamUnavailable,
  ErrorCode.RateLimited,
]);

function isOutage(error: GraphQLError | GraphQLFormattedError): boolean {
  const code = error.extensions?.code;
  if (typeof code !== 'string') return false;
  if (OUTAGES.has(code)) return true;
  if (code !== ErrorCode.UpstreamError) return false;
  const original = 'originalError' in error ? error.originalError : undefined;
  return original instanceof UpstreamError && original.upstreamFault;
}

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
  if (!errors.every(isOutage)) return null;
  return errors[0]?.extensions?.code as string;
}

/** The stored answer, marked as stale with its age. */
export function markStale(result: ExecutionResult, ageMs: number): ExecutionResult {
  return { ...result, extensions: { ...result.extensions, stale: { ageMs } } };
}

/** True for an answer this module marked: it must never be stored as a fresh one. */
export function isStale(result: ExecutionResult): boolean {
  return result.extensions?.stale !== undefined;
}
