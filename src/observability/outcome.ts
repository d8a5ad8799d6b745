/**
 * What a GraphQL request came to, for sms_graphql_requests_total and the request log line: `ok`,
 * a client's mistake (`client_error`: fixed by changing the request or its credentials), or an
 * `error` of the gateway or the service behind it, which is what the error-ratio alert pages on
 * (docs/alerts/prometheus-rules.yml).
 */
import { ERROR_CODES, ErrorCode } from '../core/errors.js';

export type OutcomeKind = 'ok' | 'client_error' | 'error';

export interface Outcome {
  readonly outcome: OutcomeKind;
  /** The error code that decided the outcome (`none` when ok): one of ErrorCode, a bounded set. */
  readonly code: string;
}

/**
 * The codes of the gateway's or the service's failures. Every other code is the caller's to fix,
 * RATE_LIMITED (AccountsTakingTurns and ManyAccountsRateLimited watch it) and UPSTREAM_CALL_LIMIT
 * included.
 */
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
 * The outcome of one result: `error` when any of its errors is the gateway's or the service's
 * (partial data included), else `client_error` when it has errors, else `ok`. A streamed result
 * (@defer, a subscription) is judged by what it answered first: `ok` once the stream opened.
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
