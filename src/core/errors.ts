import { GraphQLError } from 'graphql';

/**
 * Every code a client can see in `extensions.code`, ours or the libraries': docs/errors.md says
 * when each is sent (test/docs/errors-table.test.ts checks it, and that src/ names codes from here).
 */
export const ErrorCode = {
  Unauthenticated: 'UNAUTHENTICATED',
  BadUserInput: 'BAD_USER_INPUT',
  UpstreamTimeout: 'UPSTREAM_TIMEOUT',
  UpstreamError: 'UPSTREAM_ERROR',
  UpstreamUnavailable: 'UPSTREAM_UNAVAILABLE',
  ResponseTooLarge: 'RESPONSE_TOO_LARGE',
  UpstreamCallLimit: 'UPSTREAM_CALL_LIMIT',
  RateLimited: 'RATE_LIMITED',
  LiveUpdatesOff: 'LIVE_UPDATES_OFF',
  SubscriptionLimit: 'SUBSCRIPTION_LIMIT',
  ResyncRequired: 'RESYNC_REQUIRED',
  SlowConsumer: 'SLOW_CONSUMER',
  PersistedQueryRequired: 'PERSISTED_QUERY_REQUIRED',
  PersistedQueryNotFound: 'PERSISTED_QUERY_NOT_FOUND',
  PersistedQueryMismatch: 'PERSISTED_QUERY_MISMATCH',
  RequestEntityTooLarge: 'REQUEST_ENTITY_TOO_LARGE',
  BadRequest: 'BAD_REQUEST',
  GraphQLParseFailed: 'GRAPHQL_PARSE_FAILED',
  GraphQLValidationFailed: 'GRAPHQL_VALIDATION_FAILED',
  InternalServerError: 'INTERNAL_SERVER_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const ERROR_CODES: readonly ErrorCode[] = Object.values(ErrorCode);

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
  /** A transient failure of a read (reset, 502/503/504, timeout): safe to try again. */
  readonly retryable?: boolean;
  /** The service is unwell for this call (counts towards opening the circuit breakers). */
  readonly upstreamFault?: boolean;
  /** The service could not be reached at all: evidence about it whichever account called. */
  readonly connectionFault?: boolean;
  /** RATE_LIMITED only: how long the service asked this account to stay away, in milliseconds. */
  readonly retryAfterMs?: number;
  /** A call refused inside the gateway: whose calls are paused, an account id or "service". */
  readonly refusedFor?: string;
}

/** A failed upstream call; its message is safe to show a client, `cause` is for the log. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly retryable: boolean;
  readonly upstreamFault: boolean;
  readonly connectionFault: boolean;
  readonly retryAfterMs: number | undefined;
  readonly refusedFor: string | undefined;
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
    this.refusedFor = options.refusedFor;
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

/** A cursor or resume token signed with a key this gateway no longer has (or never had). */
export function resyncRequired(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.ResyncRequired } });
}

/** An upstream failure as the client sees it (its message and code); null for any other error. */
export function upstreamErrorToGraphQL(error: GraphQLError): GraphQLError | null {
  const original = error.originalError;
  if (!(original instanceof UpstreamError)) return null;
  return new GraphQLError(original.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    // Kept (never serialised) so stale-if-error can tell an outage from an answer.
    originalError: original,
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
