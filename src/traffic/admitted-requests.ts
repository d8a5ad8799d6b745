/**
 * Puts Admission (fair-admission.ts) in front of the gateway's request listener: each request to the
 * GraphQL path is admitted, or waits its tenant's turn, before yoga reads a byte of its body. Its
 * place is freed once its response is written (a stream's: once its headers are out) or its
 * client goes away. A refused request still goes through yoga, marked, so that it is answered like any
 * other error: CORS headers, request id, log line and metrics included
 * (src/http/plugins/admission-refusals.ts).
 */
import type {
  IncomingHttpHeaders,
  IncomingMessage,
  RequestListener,
  ServerResponse,
} from 'node:http';
import type { Credentials } from '../core/credentials.js';
import type { Identity } from '../core/identity.js';
import type { CredentialMemory } from './verification.js';
import {
  accountTenant,
  ANONYMOUS,
  unverifiedPair,
  whenAdmitted,
  type Admission,
  type Refusal,
  type Release,
  type Tenant,
} from './fair-admission.js';

/**
 * What admission knows of one request, made once at the edge and read by every later step: its
 * tenant, when it arrived, how long it waited, and why it was refused if it was.
 */
export interface Ticket {
  readonly tenant: Tenant;
  /** When the request reached admission (performance.now()). */
  readonly arrivedAt: number;
  /** Milliseconds it waited for a seat (0 when it ran at once). */
  waitedMs: number;
  refusal?: Refusal;
}

const tickets = new WeakMap<IncomingMessage, Ticket>();

/** The request's ticket, when it came through admission. */
export function ticketOf(request: IncomingMessage | undefined): Ticket | undefined {
  return request ? tickets.get(request) : undefined;
}

/** Why admission refused this request, if it did (read by the refusal plugin). */
export function refusalOf(request: IncomingMessage | undefined): Refusal | undefined {
  return ticketOf(request)?.refusal;
}

/**
 * The tenant of a request, from its identity and what this copy knows of it: its account once
 * the service has accepted the pair, the pair itself until then, the anonymous pool without
 * (well-formed) credentials. Identities keep their readings, so this costs a lookup.
 */
export function tenantResolver(memory: CredentialMemory): (headers: IncomingHttpHeaders) => Tenant {
  return (headers) => {
    const identity = identityOf(memory, headers);
    return identity.kind === 'present' ? tenantOfPair(memory, identity) : ANONYMOUS;
  };
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

/** The identity Node's request headers carry (read once per header set: Identities). */
function identityOf(memory: CredentialMemory, headers: IncomingHttpHeaders): Identity {
  return memory.identities.fromHeaders({
    get: (name) => headerValue(headers[name.toLowerCase()]),
  });
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The gateway's listener behind admission; other paths and preflights go straight through.
 * `path`: where GraphQL is served (GRAPHQL_PATH, src/http/paths.ts; passed in, as this layer sits
 * below src/http). A request of a pair this copy does not know waits in the unverified class,
 * in a line of its own pair, and its call is the verification: verifying such pairs before they
 * waited ran one call per invented pair outside every seat, and a flood of 256 clients inventing
 * pairs then held the loop (a bystander's p50 went to 156 ms and beyond).
 */
export function admitRequests(
  listener: RequestListener,
  admission: Admission,
  tenantOf: (headers: IncomingHttpHeaders) => Tenant,
  path: string,
): RequestListener {
  const admit = (request: IncomingMessage, response: ServerResponse, ticket: Ticket): void =>
    whenAdmitted(
      admission.admit(ticket.tenant),
      response,
      (release) => {
        ticket.waitedMs = performance.now() - ticket.arrivedAt;
        run(listener, request, response, release);
      },
      (refusal) => {
        ticket.refusal = refusal;
        listener(request, response);
      },
    );
  return (request, response) => {
    if (request.method === 'OPTIONS' || !onGraphQLPath(request.url, path)) {
      listener(request, response);
      return;
    }
    const ticket: Ticket = {
      tenant: tenantOf(request.headers),
      arrivedAt: performance.now(),
      waitedMs: 0,
    };
    tickets.set(request, ticket);
    admit(request, response, ticket);
  };
}

function onGraphQLPath(url: string | undefined, path: string): boolean {
  if (!url?.startsWith(path)) return false;
  const next = url.charAt(path.length);
  return next === '' || next === '?' || next === '/';
}

/** Runs the request, freeing its place once its response is written or its connection closes. */
function run(
  listener: RequestListener,
  request: IncomingMessage,
  response: ServerResponse,
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
  listener(request, response);
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
