/**
 * One ticket per request or connection, made once where it arrives and read by every later step:
 * the caller's Identity, its arrival, its wait for a seat, and why admission refused it if it
 * did. Only the ticket reads credential headers. Issued by `admitRequests` for HTTP requests, by
 * server.ts for requests handed to yoga in process, by a WebSocket's `connection_init`.
 *
 * It is the only per-request state: what a later step of an HTTP request needs from an earlier
 * one (the log's record, an APQ registration, what the response cache knew) is kept here, as
 * plain data this layer names without importing the layers that fill it in.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Identities, Identity } from '../core/identity.js';
import type { Outcome } from '../observability/outcome.js';
import type { HeldWarnings } from '../observability/warning-rollup.js';
import type { Refusal, Release } from './fair-admission.js';

export interface Ticket {
  readonly identity: Identity;
  /** When the request reached this copy (performance.now()). */
  readonly arrivedAt: number;
  /** Milliseconds it waited for a seat (0 when it ran at once or was not admitted). */
  waitedMs: number;
  refusal?: Refusal;
  /** The request log's record of it (src/http/plugins/observe-requests.ts). */
  logged?: RequestRecord;
  /**
   * A query sent with its APQ hash (src/http/plugins/apq.ts), seen before yoga's plugin fills in a
   * known hash's: kept once its document validated (and matches its hash) and it is answered.
   */
  registering?: { readonly hash: string; readonly query: string; validated?: boolean };
  /**
   * What the response cache knew of it (src/cache/response-cache.ts): its operation's name (a hit
   * short-cuts the request before its context exists), its key (for the stale lookup after it
   * fails), whether its answer came from the cache (no execution behind it: read by the cache and
   * the log), and whether a stale answer was served in place of a failed one.
   */
  cache?: { operationName?: string | null; key?: string; hit?: boolean; stale?: boolean };
}

/** One record per request (docs/observability.md): request id, log line, metrics, failures. */
export interface RequestRecord {
  readonly id: string;
  /** Its ticket's arrival, so waiting for a seat counts. */
  startedAt: number;
  readonly warnings?: HeldWarnings;
  operation?: string;
  /** query, mutation or subscription, once it executes. */
  operationType?: string;
  /** It passed validation: it executed, or its answer came from the response cache. */
  validated?: boolean;
  /** The query text and operation name asked for, to name an answer from the response cache. */
  params?: { readonly query?: string; readonly operationName?: string | null };
  /** Once there is a GraphQL result (not for a page or a preflight). */
  outcome?: Outcome;
  cached?: boolean;
  errorPhase?: 'parse' | 'validate' | 'execute';
  subscription?: { readonly startedAt: number; events: number; ended?: boolean };
  /** The request line, held back until the subscription it streams ends. */
  heldLine?: Record<string, unknown>;
}

/** Yoga's server context, and the WebSocket operation's, carry the ticket here. */
export interface Ticketed {
  ticket?: Ticket;
  /** The seat this request or WebSocket operation holds, priced again once its document is known. */
  admitted?: Release;
}

type HeaderSource = Pick<Headers, 'get'> | IncomingHttpHeaders;

/** The ticket of a caller whose credential headers are `headers` (Fetch or Node's). */
export function issueTicket(identities: Identities, headers: HeaderSource): Ticket {
  const readable = typeof headers.get === 'function' ? (headers as Pick<Headers, 'get'>) : null;
  return {
    identity: identities.fromHeaders(readable ?? nodeHeaders(headers as IncomingHttpHeaders)),
    arrivedAt: performance.now(),
    waitedMs: 0,
  };
}

/**
 * The ticket a server context carries; without one, a caller without credentials, made anew so
 * what a step keeps on it reaches no other request.
 */
export function ticketOf(context: unknown): Ticket {
  return (
    (context as Ticketed | undefined)?.ticket ?? {
      identity: { kind: 'missing' },
      arrivedAt: 0,
      waitedMs: 0,
    }
  );
}

/** Node's request headers read as a Fetch `Headers` is (also by the plain-query lane). */
export function nodeHeaders(headers: IncomingHttpHeaders): Pick<Headers, 'get' | 'has' | 'keys'> {
  return {
    // Node's names are lower case, as a Headers' are (OpenTelemetry's getter lists them).
    keys: () => Object.keys(headers).values(),
    get: (name) => {
      const value = headers[name];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
    has: (name) => headers[name] !== undefined,
  };
}
