/**
 * The service's three operations over an injected undici dispatcher: form-encoded POST, one
 * attempt per call, every body consumed, failures turned into UpstreamError with a stable code.
 * Deadlines, retries and fair share: src/traffic/traffic.ts, which hands each attempt a signal.
 */
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { Pool, type Dispatcher } from 'undici';
import type { Credentials } from '../core/credentials.js';
import type { CallOptions, UpstreamClient } from '../core/upstream-client.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { UpstreamObserver, UpstreamOperation } from '../core/signals.js';
import type { HistoryEndReading } from '../config/config.js';
import { fitToRange, wireBounds } from './history-end.js';
import { parseHistory, parseOwnedNumbers } from './wire.js';

export interface UpstreamClientOptions {
  /** Sends the requests; bound to the upstream's origin. */
  readonly dispatcher: Dispatcher;
  /** The service's base URL; its path (if any) prefixes every operation's path. */
  readonly baseUrl: URL;
  /** Backstop for one attempt's headers and each pause in its body; the real deadline is the signal. */
  readonly timeoutMs: number;
  readonly observer?: UpstreamObserver;
  /** How the service reads `history_end` (UPSTREAM_HISTORY_END). @default "exclusive" */
  readonly historyEnd?: HistoryEndReading;
}

/** Larger upstream bodies are refused rather than buffered (the 450-message demo page is ~130 KB). */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** A keep-alive pool to the upstream origin with every timeout bounded (undici's defaults are 300 s). */
export function createUpstreamPool(
  baseUrl: URL,
  options: { readonly connections: number; readonly timeoutMs: number },
): Pool {
  return new Pool(baseUrl.origin, {
    connections: options.connections,
    connectTimeout: options.timeoutMs,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 10_000,
    maxResponseSize: MAX_RESPONSE_BYTES,
  });
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const prefix = options.baseUrl.pathname.replace(/\/+$/, '');
  // Per client, not per module: a tracer keeps the provider it first met, and a provider
  // registered after another was removed (tests sharing a process) must get this client's spans.
  const tracer = trace.getTracer('sms-graphql-gateway');

  async function call(
    operation: UpstreamOperation,
    credentials: Credentials,
    params: Record<string, string>,
    signal: AbortSignal | undefined,
    traced: Context,
  ): Promise<unknown> {
    const body = new URLSearchParams(params);
    body.set('sys_id', credentials.sysId);
    body.set('auth_token', credentials.authToken);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    // `traceparent` names this attempt's span, so a traced service joins the trace (no-op if off).
    propagation.inject(traced, headers);
    let response: Dispatcher.ResponseData;
    try {
      response = await options.dispatcher.request({
        method: 'POST',
        path: `${prefix}/api/${operation}`,
        headers,
        body: body.toString(),
        // Timed from when the request is written, not while it waits for a free connection:
        // under load, queueing in the pool is not the service being slow.
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      throw abortReason(signal) ?? transportError(operation, error, options.timeoutMs);
    }
    const { statusCode } = response;
    if (statusCode === 401 || statusCode === 403 || statusCode === 429) {
      await response.body.dump();
      throw statusCode === 429
        ? rateLimited(operation, response.headers['retry-after'])
        : new UpstreamError(ErrorCode.Unauthenticated, 'The SMS service refused the credentials');
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw abortReason(signal) ?? bodyError(operation, error, options.timeoutMs);
    }
    if (statusCode < 200 || statusCode >= 300) {
      throw new UpstreamError(
        ErrorCode.UpstreamError,
        `The SMS service answered ${operation} with HTTP ${statusCode}`,
        { retryable: RETRYABLE_STATUS.has(statusCode), upstreamFault: statusCode >= 500 },
      );
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new UpstreamError(
        ErrorCode.UpstreamError,
        `The SMS service's ${operation} response is not JSON`,
        { cause: error },
      );
    }
  }

  /** One attempt, call and parse, timed and traced; neither sees the parameters (credentials). */
  function attempt<T>(
    operation: UpstreamOperation,
    credentials: Credentials,
    params: Record<string, string>,
    callOptions: CallOptions | undefined,
    parse: (operation: UpstreamOperation, json: unknown) => T,
  ): Promise<T> {
    const traced = async (span: Span | null, within: Context): Promise<T> => {
      const started = performance.now();
      let outcome = 'ok';
      try {
        const json = await call(operation, credentials, params, callOptions?.signal, within);
        return parse(operation, json);
      } catch (error) {
        outcome = error instanceof UpstreamError ? error.code : 'UNEXPECTED';
        span?.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof UpstreamError ? error.message : 'unexpected',
        });
        throw error;
      } finally {
        span?.setAttribute('sms.outcome', outcome);
        span?.end();
        options.observer?.attempt(operation, (performance.now() - started) / 1000, outcome);
      }
    };
    // Its operation's span is the parent (CallOptions.trace); a call made without one (a poll, a
    // verification) starts its own trace.
    const parent = callOptions?.trace ?? ROOT_CONTEXT;
    // The call of an operation whose span is not sampled is not sampled either (the same trace,
    // the same sampler): no span for 99 calls of 100 at 1% sampling (starting one was 3-4% of a
    // traced copy's CPU). Its `traceparent` still names the operation's, unsampled.
    if (trace.getSpan(parent)?.isRecording() === false) return traced(null, parent);
    const span = tracer.startSpan(
      `sms.upstream ${operation}`,
      { kind: SpanKind.CLIENT, attributes: { 'sms.operation': operation } },
      parent,
    );
    return traced(span, trace.setSpan(parent, span));
  }

  return {
    history(credentials, request, callOptions) {
      const bounds = wireBounds(request, options.historyEnd ?? 'exclusive');
      const params = {
        number: request.number,
        tid: request.tid,
        history_start: String(bounds.historyStart),
        history_end: String(bounds.historyEnd),
      };
      return attempt('smshistory', credentials, params, callOptions, (_, json) =>
        fitToRange(parseHistory(json, request), request),
      );
    },
    ownedNumbers(credentials, type, callOptions) {
      const params = { number_type: type === 'LOCAL' ? 'local' : 'tollfree' };
      return attempt('ownednumbers', credentials, params, callOptions, parseOwnedNumbers);
    },
    allOwnedNumbers(credentials, callOptions) {
      return attempt('allownednumbers', credentials, {}, callOptions, parseOwnedNumbers);
    },
  };
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** 502/503/504 say a proxy or the service is momentarily unwell: the read is safe to try again. */
const RETRYABLE_STATUS = new Set([502, 503, 504]);

/** Refused, unresolvable or unconnectable: the service as a whole is out of reach. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The error an abort carries when whoever aborted said why (the deadline does). */
function abortReason(signal: AbortSignal | undefined): UpstreamError | null {
  return signal?.aborted && signal.reason instanceof UpstreamError ? signal.reason : null;
}

function rateLimited(
  operation: UpstreamOperation,
  header: string | string[] | undefined,
): UpstreamError {
  const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now());
  return new UpstreamError(
    ErrorCode.RateLimited,
    `The SMS service is rate limiting this account (HTTP 429 on ${operation})`,
    retryAfterMs === null ? {} : { retryAfterMs },
  );
}

/** Retry-After in ms from `now`: delay-seconds or an HTTP date (RFC 9110 10.2.3); else null. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its weekday and month; Date.parse alone would also take "-5" as a year.
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The answer started but did not finish: a timeout, or the connection dropped mid-body. */
function bodyError(operation: UpstreamOperation, error: unknown, timeoutMs: number): UpstreamError {
  const failure = transportError(operation, error, timeoutMs);
  if (failure.code !== ErrorCode.UpstreamError || !failure.retryable) return failure;
  return new UpstreamError(
    ErrorCode.UpstreamError,
    `The SMS service's ${operation} response was cut off`,
    { cause: error, retryable: true },
  );
}

function transportError(
  operation: UpstreamOperation,
  error: unknown,
  timeoutMs: number,
): UpstreamError {
  const code = (error as { code?: unknown } | null)?.code;
  const connectionFault = typeof code === 'string' && CONNECTION_CODES.has(code);
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
    return new UpstreamError(
      ErrorCode.UpstreamTimeout,
      `The SMS service did not answer ${operation} within ${timeoutMs} ms`,
      { cause: error, retryable: true, connectionFault },
    );
  }
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
    return new UpstreamError(
      ErrorCode.UpstreamError,
      `The SMS service's ${operation} response is larger than the ${MAX_RESPONSE_BYTES / (1024 * 1024)} MiB allowed`,
      { cause: error },
    );
  }
  // Refused, reset or closed connections: the request never got a complete answer.
  return new UpstreamError(
    ErrorCode.UpstreamError,
    `The SMS service could not be reached for ${operation}`,
    { cause: error, retryable: true, connectionFault },
  );
}
