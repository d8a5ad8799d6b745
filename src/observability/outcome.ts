/**
 * What a GraphQL request came to (sms_graphql_requests_total, the request log line): `ok`, the
 * caller's mistake (`client_error`), or an `error` of ours or the service's, which alerts page on.
 */
import { ERROR_CODES, ErrorCode } from '../core/errors.js';

export type OutcomeKind = 'ok' | 'client_error' | 'error';

export interface Outcome {
  readonly outcome: OutcomeKind;
  /** The error code that decided the outcome (`none` when ok): one of ErrorCode, a bounded set. */
  readonly code: string;
}

/** The gateway's or the service's failures; every other code is the caller's to fix. */
const FAILURE_CODES: ReadonlySet<string> = new Set<string>([
  ErrorCode.UpstreamTimeout,
  ErrorCode.UpstreamError,
  ErrorCode.UpstreamUnavailable,
  ErrorCode.ResponseTooLarge,
  ErrorCode.InternalServerError,
]);

const KNOWN_CODES: ReadonlySet<string> = new Set<string>(ERROR_CODES);

export const OK: Outcome = { outcome: 'ok', code: 'none' };

/**
 * `error` when any error is ours or the service's (partial data included), else `client_error`
 * when there are errors. A streamed result (@defer, a subscription) is `ok` once it opened.
 */
export function outcomeOf(result: unknown): Outcome {
  if (typeof result !== 'object' || result === null || Symbol.asyncIterator in result) return OK;
  const errors = (result as { errors?: unknown }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return OK;
  let firstClientCode: string | undefined;
  for (const error of errors) {
    const code = codeOf(error);
    if (FAILURE_CODES.has(code)) return { outcome: 'error', code };
    firstClientCode ??= code;
  }
  return { outcome: 'client_error', code: firstClientCode ?? ErrorCode.InternalServerError };
}

/** The error's code; anything without one of ours (it should not happen) is an internal error. */
function codeOf(error: unknown): string {
  const code = (error as { extensions?: { code?: unknown } } | null)?.extensions?.code;
  return typeof code === 'string' && KNOWN_CODES.has(code) ? code : ErrorCode.InternalServerError;
}
