/**
 * Puts Admission (fair-admission.ts) in front of the request listener: each request gets its ticket
 * and waits its tenant's turn before yoga reads its body, holding its place until its response is
 * written or its client goes; a stream's is freed at its head, by the Release its context carries
 * (`admitted`: src/http/plugins/stream-seats.ts). A refused GraphQL request still goes through
 * yoga, its refusal on its ticket (src/http/plugins/admission-refusals.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Identities, Identity } from '../core/identity.js';
import type { CredentialMemory } from './verification.js';
import {
  accountTenant,
  Admission,
  ANONYMOUS,
  isRefusal,
  NO_SEAT,
  turnUnlessGone,
  unverifiedPair,
  type AdmissionOptions,
  type LoopLoad,
  type Refusal,
  type Release,
  type Tenant,
} from './fair-admission.js';
import { processLoop } from './loop-monitor.js';
import { issueTicket, type Ticket, type Ticketed } from './ticket.js';

/** A Node listener that reads the request's ticket from its third argument (yoga's context). */
export type TicketedListener = (
  request: IncomingMessage,
  response: ServerResponse,
  context: Ticketed & { ticket: Ticket },
) => void;

/** Paths admission treats apart (src/http/paths.ts, passed in: this layer sits below src/http). */
export interface AdmittedPaths {
  /** Where yoga answers a refused request. */
  readonly graphql: string;
  /** Probes and scrapes, never admitted: a balancer must read /readiness however busy the copy. */
  readonly probes: ReadonlySet<string>;
}

/**
 * The copy's admission (on the process's loop unless given one), over its credential verdicts: a
 * caller's tenant is its account once the service accepted its pair lately, the pair (in the
 * unverified class) until then, anonymous without well-formed credentials.
 */
export function requestAdmission(
  memory: CredentialMemory,
  options: Omit<AdmissionOptions, 'load'> & { readonly load?: LoopLoad },
) {
  const load = options.load ?? processLoop();
  const queue = new Admission({ ...options, load });
  const tenantOfPair = (identity: { readonly account: string; readonly pair: string }): Tenant =>
    memory.verdictOf(identity.pair) === 'accepted'
      ? accountTenant(identity.account)
      : unverifiedPair(identity.pair);
  const tenantOf = (identity: Identity): Tenant =>
    identity.kind === 'present' ? tenantOfPair(identity) : ANONYMOUS;
  return {
    /** What sms_admission_* and sms_event_loop_utilization report. */
    state: () => ({
      waiting: queue.waiting,
      seats: queue.seats,
      utilization: load.utilization,
    }),
    /** Takes a caller's turn (a WebSocket's `connection_init`). */
    admit: (identity: Identity) => queue.admit(tenantOf(identity)),
    /** TrafficOptions.ledger: one ledger orders requests and their calls, and bills the calls. */
    ledger: queue.ledger,
    /** `listener` behind admission (admitRequests). */
    listener: (listener: TicketedListener, paths: AdmittedPaths) =>
      admitRequests(listener, queue, memory.identities, tenantOf, paths),
  };
}

/**
 * The listener behind admission: every request but preflights and probes waits its turn. An unknown
 * pair waits in its own line and its call is its verification (not before: that call took no seat).
 */
export function admitRequests(
  listener: TicketedListener,
  admission: Admission,
  identities: Identities,
  tenantOf: (identity: Identity) => Tenant,
  paths: AdmittedPaths,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const ticket = issueTicket(identities, request.headers);
    // No seat until admitted (probes, preflights and refusals hold none); set here so every
    // request's context has one shape.
    const context: Ticketed & { ticket: Ticket } = { ticket, admitted: NO_SEAT };
    const path = pathOf(request.url);
    if (request.method === 'OPTIONS' || paths.probes.has(path)) {
      listener(request, response, context);
      return;
    }
    const go = (release: Release): void => {
      ticket.waitedMs = performance.now() - ticket.arrivedAt;
      context.admitted = release;
      run(listener, request, response, context, release);
    };
    const refuse = (refusal: Refusal): void => {
      ticket.refusal = refusal;
      if (path === paths.graphql || path.startsWith(`${paths.graphql}/`)) {
        listener(request, response, context);
        return;
      }
      response.writeHead(429, {
        'retry-after': String(refusal.retryAfterSeconds),
        'content-type': 'text/plain; charset=utf-8',
      });
      response.end('The gateway is busy: retry later.\n');
    };
    const outcome = admission.admit(tenantOf(ticket.identity));
    if (typeof outcome === 'function') return go(outcome);
    if (isRefusal(outcome)) return refuse(outcome);
    // A client gone while waiting leaves its line; a place granted to it is handed back at once.
    void turnUnlessGone(outcome, response, () => response.destroyed).then((turn) => {
      if (typeof turn === 'function') go(turn);
      else if (turn) refuse(turn);
    });
  };
}

/** The path of a request target (origin form), without its query. */
function pathOf(url: string | undefined): string {
  const target = url ?? '/';
  const end = target.search(/[?#]/);
  return end < 0 ? target : target.slice(0, end);
}

/** Runs the request, freeing its place once its response is written or its connection closes. */
function run(
  listener: TicketedListener,
  request: IncomingMessage,
  response: ServerResponse,
  context: Ticketed & { ticket: Ticket },
  release: Release,
): void {
  // The bytes written are charged beside the request (HTTP/1.1: one request at a time per socket).
  const socket = response.socket;
  const before = socket?.bytesWritten ?? 0;
  response.once('close', () => release({ bytes: (socket?.bytesWritten ?? before) - before }));
  listener(request, response, context);
}
