import { GraphQLError } from 'graphql';

/** The stable codes a client sees in `extensions.code`. */
export const ErrorCode = {
  Unauthenticated: 'UNAUTHENTICATED',
  BadUserInput: 'BAD_USER_INPUT',
  UpstreamTimeout: 'UPSTREAM_TIMEOUT',
  UpstreamError: 'UPSTREAM_ERROR',
  /** The circuit breaker is open: the service kept failing, calls are paused. */
  UpstreamUnavailable: 'UPSTREAM_UNAVAILABLE',
  /** One GraphQL request needed more upstream calls than allowed. */
  UpstreamCallLimit: 'UPSTREAM_CALL_LIMIT',
  /** The service answered 429 for this account; `extensions.retryAfter` says when to come back. */
  RateLimited: 'RATE_LIMITED',
  /**
   * A live subscription cannot resume from its token (too many messages since, or the history
   * changed): refetch the list, then subscribe again without a token.
   */
  ResyncRequired: 'RESYNC_REQUIRED',
  /** A live subscriber fell too far behind and was ended; `extensions.resumeToken` resumes it. */
  SlowConsumer: 'SLOW_CONSUMER',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The codes an upstream call can fail with. */
export type UpstreamErrorCode =
  | typeof ErrorCode.Unauthenticated
  | typeof ErrorCode.UpstreamTimeout
  | typeof ErrorCode.UpstreamError
  | typeof ErrorCode.UpstreamUnavailable
  | typeof ErrorCode.UpstreamCallLimit
  | typeof ErrorCode.RateLimited;

export interface UpstreamErrorOptions {
  readonly cause?: unknown;
  /** Safe to try again: the call is a read and the failure was transient (reset, 502/503/504, timeout). */
  readonly retryable?: boolean;
  /** Says the service is unwell for this call (counts towards opening the circuit breakers). */
  readonly upstreamFault?: boolean;
  /**
   * The service could not be reached at all (refused, unresolvable, connect timeout): evidence
   * about the service as a whole, whichever account made the call.
   */
  readonly connectionFault?: boolean;
  /** RATE_LIMITED only: how long the service asked this account to stay away, in milliseconds. */
  readonly retryAfterMs?: number;
}

/**
 * A failed upstream call. The message is safe to show a client (no credentials, no raw body);
 * `cause` keeps the low-level error for the server's own log.
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly retryable: boolean;
  readonly upstreamFault: boolean;
  readonly connectionFault: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(
    readonly code: UpstreamErrorCode,
    message: string,
    options: UpstreamErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable ?? false;
    this.upstreamFault = options.upstreamFault ?? this.retryable;
    this.connectionFault = options.connectionFault ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.Unauthenticated } });
}

export function badUserInput(message: string, argumentName?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: ErrorCode.BadUserInput, ...(argumentName ? { argumentName } : {}) },
  });
}

/**
 * Turns the error behind a field into what the client sees: upstream failures keep their
 * message and stable code; anything unexpected is masked. Returns `null` for errors this
 * module does not know, so the caller can apply its default masking.
 */
export function upstreamErrorToGraphQL(error: GraphQLError): GraphQLError | null {
  const original = error.originalError;
  if (!(original instanceof UpstreamError)) return null;
  return new GraphQLError(original.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions:
      original.retryAfterMs === undefined
        ? { code: original.code }
        : { code: original.code, retryAfter: retryAfterSeconds(original.retryAfterMs) },
  });
}

/** Whole seconds a client should wait: never 0, so "retry after 0 s" is never advised. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
