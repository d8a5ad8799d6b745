/**
 * Puts Admission (fair-admission.ts) in front of the gateway's request listener: each request to the
 * GraphQL path is admitted, or waits its tenant's turn, before yoga reads a byte of its body. Its
 * place is freed once its response is written (a stream's: once its headers are out) or its
 * client goes away. A refused request still goes through yoga, its refusal on its ticket, so
 * that it is answered like any other error: CORS headers, request id, log line and metrics
 * included (src/http/plugins/admission-refusals.ts). Every request gets its ticket here
 * (ticket.ts), admitted or not, and yoga reads it from its server context.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Credentials } from '../core/credentials.js';
import type { Identities, Identity } from '../core/identity.js';
import type { CredentialMemory } from './verification.js';
import {
  accountTenant,
  ANONYMOUS,
  unverifiedPair,
  whenAdmitted,
  type Admission,
  type Release,
  type Tenant,
} from './fair-admission.js';
import { issueTicket, type Ticketed } from './ticket.js';

/** A Node listener that reads the request's ticket from its third argument (yoga's context). */
export type TicketedListener = (
  request: IncomingMessage,
  response: ServerResponse,
  context: Required<Ticketed>,
) => void;

/**
 * The tenant of a caller, from its identity and what this copy knows of it: its account once
 * the service has accepted the pair, the pair itself until then, the anonymous pool without
 * (well-formed) credentials.
 */
export function tenantResolver(memory: CredentialMemory): (identity: Identity) => Tenant {
  return (identity) => (identity.kind === 'present' ? tenantOfPair(memory, identity) : ANONYMOUS);
}

/** The tenant whose work a call made with these credentials is (Admission.chargeWork). */
export function credentialsTenant(memory: CredentialMemory): (credentials: Credentials) => Tenant {
  return (credentials) => tenantOfPair(memory, memory.identities.of(credentials));
}

function tenantOfPair(
  memory: CredentialMemory,
  identity: { readonly account: string; readonly pair: string },
): Tenant {
  return memory.verdictOf(identity.pair) === 'accepted'
    ? accountTenant(identity.account)
    : unverifiedPair(identity.pair);
}

/** Where requests go that admission treats apart (src/http/paths.ts; passed in, as this layer sits below src/http). */
export interface AdmittedPaths {
  /** Where GraphQL is served: a refused request there is answered by yoga (its refusal plugin). */
  readonly graphql: string;
  /** Probes and scrapes, never admitted: a balancer must read /readiness however busy the copy. */
  readonly probes: ReadonlySet<string>;
}

/**
 * The gateway's listener behind admission. Every request waits its tenant's turn but preflights
 * and probes: GraphQL and the GraphiQL page's files (under the GraphQL path), and any other path
 * too, so no request is answered outside every seat. A request of a pair this copy does not know
 * waits in the unverified class, in a line of its own pair, and
 * its call is the verification: verifying such pairs before they waited ran one call per
 * invented pair outside every seat, and a flood of 256 clients inventing pairs then held the loop
 * (a bystander's p50 went to 156 ms and beyond).
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
    const context = { ticket };
    const path = pathOf(request.url);
    if (request.method === 'OPTIONS' || paths.probes.has(path)) {
      listener(request, response, context);
      return;
    }
    whenAdmitted(
      admission.admit(tenantOf(ticket.identity)),
      response,
      (release) => {
        ticket.waitedMs = performance.now() - ticket.arrivedAt;
        run(listener, request, response, context, release);
      },
      (refusal) => {
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
      },
    );
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
  context: Required<Ticketed>,
  release: Release,
): void {
  // What the answer took on the wire is the work admission charges beside the request itself
  // (one request at a time per connection: HTTP/1.1 without pipelining).
  const socket = response.socket;
  const before = socket?.bytesWritten ?? 0;
  response.once('close', () => release({ bytes: (socket?.bytesWritten ?? before) - before }));
  // An answer holds its place until it is written (a large one, the GraphiQL page among them,
  // costs its writing too); a stream (SSE, @defer) holds none once its headers are out, for as
  // long as it stays open. Node sends implicit headers through writeHead too, so this sees every
  // response.
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    response.writeHead = writeHead;
    const result = (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    if (isStream(contentTypeOf(response, args))) release();
    return result;
  } as typeof response.writeHead;
  listener(request, response, context);
}

/** The content type set on the response or passed to writeHead (an object or a flat array). */
function contentTypeOf(response: ServerResponse, args: unknown[]): unknown {
  for (const arg of args) {
    if (Array.isArray(arg)) {
      for (let i = 0; i + 1 < arg.length; i += 2) {
        if (String(arg[i]).toLowerCase() === 'content-type') return arg[i + 1];
      }
    } else if (arg && typeof arg === 'object') {
      for (const [name, value] of Object.entries(arg)) {
        if (name.toLowerCase() === 'content-type') return value;
      }
    }
  }
  return response.getHeader('content-type');
}

function isStream(contentType: unknown): boolean {
  const type = String(contentType ?? '');
  return type.startsWith('text/event-stream') || type.startsWith('multipart/');
}
