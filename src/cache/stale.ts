/** Stale-if-error (docs/stale-if-error.md): a failed answer replaced by a recent stored one. */
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { ErrorCode, UpstreamError } from '../core/errors.js';

/**
 * The codes that say the service is out or pausing us; UPSTREAM_ERROR only as an outage
 * (`upstreamFault`). docs/stale-if-error.md "Rules" says why no other code counts.
 */
const OUTAGES: ReadonlySet<string> = new Set([
  ErrorCode.UpstreamTimeout,
  ErrorCode.UpstreamUnavailable,
  ErrorCode.RateLimited,
]);

function isOutage(error: GraphQLError | GraphQLFormattedError): boolean {
  const code = error.extensions?.code;
  if (typeof code === 'string' && OUTAGES.has(code)) return true;
  if (code !== ErrorCode.UpstreamError) return false;
  const original = 'originalError' in error ? error.originalError : undefined;
  return original instanceof UpstreamError && original.upstreamFault;
}

/** RFC 7234 §5.5: 110 says the answer is stale, 111 why (the service could not be asked). */
export const STALE_WARNING = '110 - "Response is Stale", 111 - "Revalidation Failed"';

/**
 * The first error's code when every error is the service's fault, else null. Partial answers are
 * replaced whole: patching fresh parts in would mix two moments.
 */
export function serviceFailureCode(result: ExecutionResult): string | null {
  const errors = result.errors ?? [];
  if (errors.length === 0 || !errors.every(isOutage)) return null;
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
