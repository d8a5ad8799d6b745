/**
 * One ticket per request or connection, made once where it arrives and read by every later step:
 * the caller's Identity, its arrival, its wait for a seat, and why admission refused it if it
 * did. Only the ticket reads credential headers. Issued by `admitRequests` for HTTP requests, by
 * server.ts for requests handed to yoga in process, by a WebSocket's `connection_init`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Identities, Identity } from '../core/identity.js';
import type { Refusal, Release } from './fair-admission.js';

export interface Ticket {
  readonly identity: Identity;
  /** When the request reached this copy (performance.now()). */
  readonly arrivedAt: number;
  /** Milliseconds it waited for a seat (0 when it ran at once or was not admitted). */
  waitedMs: number;
  refusal?: Refusal;
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

const WITHOUT_TICKET: Ticket = Object.freeze({
  identity: { kind: 'missing' },
  arrivedAt: 0,
  waitedMs: 0,
}) as Ticket;

/** The ticket a server context carries; without one, a caller without credentials. */
export function ticketOf(context: unknown): Ticket {
  return (context as Ticketed | undefined)?.ticket ?? WITHOUT_TICKET;
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
