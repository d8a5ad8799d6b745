import { GraphQLError } from 'graphql';

/**
 * Every code a client can see in `extensions.code`, ours or the libraries'. docs/errors.md has one
 * row per member (test/docs/errors-table.test.ts checks it, and that src/ names codes from here).
 */
export const ErrorCode = {
  /** No usable credentials (no upstream call made), or the service refused them. */
  Unauthenticated: 'UNAUTHENTICATED',
  /** An argument was refused before any upstream call; `extensions.argumentName` names it. */
  BadUserInput: 'BAD_USER_INPUT',
  UpstreamTimeout: 'UPSTREAM_TIMEOUT',
  UpstreamError: 'UPSTREAM_ERROR',
  /** The circuit breaker is open: the service kept failing, calls are paused. */
  UpstreamUnavailable: 'UPSTREAM_UNAVAILABLE',
  /** The answer grew past MAX_RESPONSE_BYTES while it was built; the lists after that point are null. */
  ResponseTooLarge: 'RESPONSE_TOO_LARGE',
  /** One GraphQL request needed more upstream calls than allowed. */
  UpstreamCallLimit: 'UPSTREAM_CALL_LIMIT',
  /** The service answered 429 for this account; `extensions.retryAfter` says when to come back. */
  RateLimited: 'RATE_LIMITED',
  /** A subscription on a gateway whose live updates are off (LIVE_POLL_MS=0). */
  LiveUpdatesOff: 'LIVE_UPDATES_OFF',
  /** Too many live subscriptions for one account, or operations on one WebSocket. */
  SubscriptionLimit: 'SUBSCRIPTION_LIMIT',
  /** A resume token too old or events lost, or a token signed with a key no longer had. */
  ResyncRequired: 'RESYNC_REQUIRED',
  /** A live stream ended for falling behind; `extensions.resumeToken` resumes it. */
  SlowConsumer: 'SLOW_CONSUMER',
  /** PERSISTED_OPERATIONS is set and the request sent a query text instead of a hash. */
  PersistedQueryRequired: 'PERSISTED_QUERY_REQUIRED',
  /** The hash is unknown: APQ (send the query with it) or not in the allow-list. */
  PersistedQueryNotFound: 'PERSISTED_QUERY_NOT_FOUND',
  /** APQ: the query sent does not hash to the hash sent with it (yoga's APQ plugin). */
  PersistedQueryMismatch: 'PERSISTED_QUERY_MISMATCH',
  /** The body is larger than MAX_BODY_BYTES. */
  RequestEntityTooLarge: 'REQUEST_ENTITY_TOO_LARGE',
  /** Not a GraphQL request: bad JSON, no query, a bad Content-Length, … (yoga's and ours). */
  BadRequest: 'BAD_REQUEST',
  /** Syntax errors (graphql-js / yoga); a document over FIXED_MAX_TOKENS is GRAPHQL_VALIDATION_FAILED. */
  GraphQLParseFailed: 'GRAPHQL_PARSE_FAILED',
  /** Validation errors, and the query limits (aliases, depth, directives, cost). */
  GraphQLValidationFailed: 'GRAPHQL_VALIDATION_FAILED',
  /** Anything unexpected; the message is masked (yoga). */
  InternalServerError: 'INTERNAL_SERVER_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Every code. */
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
