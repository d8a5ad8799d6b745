/**
 * graphql-ws (protocol graphql-transport-ws) over WebSocket at /graphql, beside yoga's HTTP and
 * SSE: the same schema, plugins and context, run through yoga's envelop (docs/live-updates.md,
 * docs/errors.md, docs/limits.md). Browsers cannot set headers on a WebSocket, so credentials
 * come in `connectionParams`, as `{ "Authorization": "Basic ..." }` or `{ "X-Sys-Id": ...,
 * "X-Auth-Token": ... }` (any case); a connection without well-formed credentials is closed at
 * once (4403, with a reason naming the shape expected).
 *
 * Bounded like HTTP: no frame larger than MAX_BODY_BYTES is read (ws refuses it from its length
 * header, close 1009), a `connection_init` larger than MAX_CONNECTION_INIT_BYTES is refused
 * (4413), and a verified connection holds a slot of `held` (src/traffic/held-streams.ts: one cap
 * for WebSockets and graphql-sse streams together, and a share per account) or is closed once
 * verified (1013, try again later).
 *
 * A connection proves itself in its `connection_init`, never at the upgrade (browsers send no
 * credentials with it), so only verified connections count against that cap, and until then one
 * holds little: the upgrade itself is cheap and is not admitted; the `connection_init` takes its
 * tenant's turn (`admit`, as an HTTP request), holding a place until its verdict; and a connection
 * not yet verified is closed after VERIFICATION_WINDOW_MS (4408), and the oldest of them once
 * MAX_UNVERIFIED_CONNECTIONS are open (1013) to make room for a new one: idle sockets of invented
 * pairs, reconnecting, never keep a real account's socket out (soak `idle-invented-ws`). Each
 * `subscribe` then takes its turn too, before its document is read (soak `ws-subscribes`).
 *
 * Browsers let any page open a WebSocket to any host (no preflight, no CORS), so the upgrade's
 * `Origin` is checked here against the same CORS_ORIGINS as HTTP: a page whose fetches would be
 * refused gets 403 before the handshake. No `Origin` (a server's client) and the gateway's own
 * origin stay allowed, as for HTTP.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  getOperationAST,
  GraphQLError,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
} from 'graphql';
import type { ConnectionInitMessage } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Credentials } from '../core/credentials.js';
import { Identities, type Identity } from '../core/identity.js';
import type { Gateway } from './server.js';
import { SUBSCRIPTION_LIMIT } from '../live/hub.js';
import {
  isRefusal,
  NO_SEAT,
  turnUnlessGone,
  type Refusal,
  type Release,
  type Waiting,
} from '../traffic/fair-admission.js';
import type { HeldStreams } from '../traffic/held-streams.js';
import { issueTicket, type Ticket } from '../traffic/ticket.js';
import { originAllowed, refusalMessage, type CorsSettings } from './cors.js';
import { busyError } from './plugins/admission-refusals.js';

/** Largest `connection_init` message: credentials need a few hundred bytes. */
export const MAX_CONNECTION_INIT_BYTES = 16 * 1024;
/** Unverified connections per copy: at 256, a flood of invented pairs churned real ones out. */
const MAX_UNVERIFIED_CONNECTIONS = 1024;
/** The admission wait (at most 5 s) and one verification call. */
const VERIFICATION_WINDOW_MS = 10_000;
/** A closed connection's socket is cut this long after the close frame if the client sends none. */
const CLOSE_GRACE_MS = 1_000;
/** RFC 6455 5.5. */
const MAX_REASON_BYTES = 123;

export const CLOSE_REASON_MISSING_CREDENTIALS =
  'Credentials required: connectionParams {"Authorization":"Basic base64(sys_id:auth_token)"}';
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-sys-id', 'x-auth-token']);

export interface WebSocketOptions {
  readonly path: string;
  readonly maxPerConnection: number;
  /** Slots for streams, shared with graphql-sse. @default no cap */
  readonly held?: HeldStreams;
  readonly maxUnverified?: number;
  readonly verificationWindowMs?: number;
  /** Largest frame read (MAX_BODY_BYTES). @default 100000 */
  readonly maxPayloadBytes?: number;
  /** Which pages may connect. @default any page */
  readonly cors?: CorsSettings;
  /** Keep-alive ping interval. @default 12000 */
  readonly keepAliveMs?: number;
  /**
   * Admission of each connection_init, holding its place until the verdict, and of each
   * `subscribe`, holding it while its document is parsed and validated and, for a query or
   * mutation, until its result is sent. @default none
   */
  readonly admit?: (identity: Identity) => Release | Waiting | Refusal;
  /** Whether the service accepts the credentials (4403 if not). @default every pair */
  readonly verify?: (credentials: Credentials) => Promise<boolean>;
  /** What this copy remembers of a pair (memory only, no call). @default unknown */
  readonly verdictOf?: (pair: string) => 'accepted' | 'refused' | 'unknown';
  readonly identities?: Identities;
  /** Connection events, for the log (src/observability/connection-log.ts). */
  readonly onConnected?: (socket: WebSocket, accepted: boolean) => void;
  readonly onOperation?: (socket: WebSocket) => void;
  readonly onClosed?: (socket: WebSocket, code: number, reason: string) => void;
}

/** The credential headers a connection's `connectionParams` carry, as request headers. */
function headersFromConnectionParams(params: unknown): Headers {
  const headers = new Headers();
  if (!params || typeof params !== 'object') return headers;
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    if (typeof value !== 'string' || !CREDENTIAL_HEADERS.has(name.toLowerCase())) continue;
    try {
      headers.set(name.toLowerCase(), value);
    } catch {
      // A value no header could carry: left out, so the credentials read as malformed or missing.
    }
  }
  return headers;
}

export interface AttachedWebSocket {
  close(): Promise<void>;
}

type Envelope = Record<'execute' | 'subscribe', (args: ExecutionArgs) => unknown>;

export function attachWebSocket(
  server: Server,
  gateway: Gateway,
  options: WebSocketOptions,
): AttachedWebSocket {
  const maxPayload = options.maxPayloadBytes ?? 100_000;
  const identities = options.identities ?? new Identities(null);
  const maxInitBytes = Math.min(MAX_CONNECTION_INIT_BYTES, maxPayload);
  const wss = new WebSocketServer({ noServer: true, path: options.path, maxPayload });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Until ws handles the upgrade the socket has no `error` listener: a client resetting then
    // would be an uncaught ECONNRESET that ends the process.
    socket.on('error', destroyQuietly);
    const { origin, host } = request.headers;
    if (options.cors && origin !== undefined && !upgradeOriginAllowed(options.cors, origin, host)) {
      refuseOrigin(socket, origin);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      socket.off('error', destroyQuietly);
      // Without the request: graphql-ws would hold it, headers and all, as long as the connection.
      wss.emit('connection', ws);
    });
  });
  const maxUnverified = options.maxUnverified ?? MAX_UNVERIFIED_CONNECTIONS;
  const windowMs = options.verificationWindowMs ?? VERIFICATION_WINDOW_MS;
  /** Connections not yet verified, oldest first, with their window's timer. */
  const unverified = new Map<WebSocket, NodeJS.Timeout>();
  const leaveUnverified = (socket: WebSocket): void => {
    clearTimeout(unverified.get(socket));
    unverified.delete(socket);
  };
  // The operations running on each socket, by id, with the places they still hold (queries and
  // mutations; a subscription's is NO_SEAT): freed at their completion or the socket's close,
  // whichever comes first (a query's answer may never be sent).
  const operations = new WeakMap<WebSocket, Map<string, Release>>();
  const operationsOf = (socket: WebSocket): Map<string, Release> => {
    let held = operations.get(socket);
    if (!held) {
      const ids = (held = new Map<string, Release>());
      operations.set(socket, ids);
      socket.once('close', () => ids.forEach((release) => release()));
    }
    return held;
  };
  // The size of each connection's connection_init, read before graphql-ws.
  const firstMessageBytes = new WeakMap<WebSocket, number>();
  wss.on('connection', (socket) => {
    // As for HTTP connections: the one waiting longest has held a place longest for nothing.
    const [oldest] = unverified.keys();
    if (oldest && unverified.size >= maxUnverified) {
      leaveUnverified(oldest);
      closeSoon(oldest, 1013, 'Too many connections awaiting verification; try again');
    }
    const window = setTimeout(() => {
      unverified.delete(socket);
      closeSoon(socket, 4408, `connection_init not verified within ${windowMs} ms`);
    }, windowMs).unref();
    unverified.set(socket, window);
    socket.once('close', () => leaveUnverified(socket));
    socket.once('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      const bytes = Array.isArray(data)
        ? data.reduce((sum, part) => sum + part.length, 0)
        : data.byteLength;
      firstMessageBytes.set(socket, bytes);
    });
    // ws reports an oversized frame (closed 1009) as an error graphql-ws would log as internal:
    // instead the socket is cut once the 1009 is out, not reading the rest of a 90 MB frame.
    queueMicrotask(() => {
      socket.removeAllListeners('error');
      socket.on('error', () => setImmediate(() => socket.terminate()));
    });
  });
  const disposable = useServer<ConnectionInitMessage['payload'], { ticket: Ticket }>(
    {
      execute: (args) => (args.rootValue as Envelope).execute(args) as never,
      subscribe: (args) => (args.rootValue as Envelope).subscribe(args) as never,
      onConnect: async (ctx) => {
        const socket = ctx.extra.socket;
        const close = (code: number, reason: string): false => {
          closeSoon(socket, code, reason);
          return false;
        };
        const refuse = (code: number, reason: string): false => {
          options.onConnected?.(socket, false);
          return close(code, reason);
        };
        if ((firstMessageBytes.get(socket) ?? 0) > maxInitBytes) {
          return refuse(4413, `connection_init larger than ${maxInitBytes} bytes`);
        }
        const ticket = issueTicket(identities, headersFromConnectionParams(ctx.connectionParams));
        ctx.extra.ticket = ticket;
        const read = ticket.identity;
        if (read.kind !== 'present') {
          return refuse(
            4403,
            read.kind === 'missing'
              ? CLOSE_REASON_MISSING_CREDENTIALS
              : `Malformed credentials in connectionParams: ${read.reason}`,
          );
        }
        // A pair refused lately is closed without a turn; one never seen holds the unverified
        // class's turn until its verdict. An outage is not a refusal.
        const known = options.verdictOf?.(read.pair) ?? 'unknown';
        let accepted = known === 'unknown' ? undefined : known === 'accepted';
        const turn =
          accepted === false ? NO_SEAT : await admitted(options.admit?.(read) ?? NO_SEAT, socket);
        if (turn === null) return false;
        if (isRefusal(turn)) {
          return refuse(1013, `The gateway is busy; retry after ${turn.retryAfterSeconds} s`);
        }
        accepted ??= await (options.verify?.(read.credentials).catch(() => true) ?? true);
        turn();
        options.onConnected?.(socket, accepted);
        if (socket.readyState !== socket.OPEN) return false;
        if (!accepted) return close(4403, 'The SMS service refused the credentials');
        const slot = options.held?.hold(read.account) ?? (() => undefined);
        if (typeof slot !== 'function') return close(1013, options.held?.message(slot) ?? '');
        leaveUnverified(socket);
        socket.once('close', slot);
        return true;
      },
      onClose: (ctx, code, reason) => options.onClosed?.(ctx.extra.socket, code ?? 0, reason ?? ''),
      onSubscribe: async (ctx, id, payload) => {
        const socket = ctx.extra.socket;
        const ids = operationsOf(socket);
        if (ids.size >= options.maxPerConnection) {
          return [
            new GraphQLError(
              `This connection already runs ${options.maxPerConnection} operations, the most allowed; complete one first`,
              { extensions: { code: SUBSCRIPTION_LIMIT } },
            ),
          ];
        }
        // Each operation takes its turn as an HTTP request does, before its document is parsed
        // or validated: a socket is one more door, not a way around the line (issue: five
        // subscribes a second of a costly document held a bystander's answers for seconds).
        const identity = ctx.extra.ticket?.identity;
        const turn = await admitted((identity && options.admit?.(identity)) ?? NO_SEAT, socket);
        if (turn === null) return [new GraphQLError('The connection closed while waiting')];
        if (isRefusal(turn)) return [busyError(turn, 'operations')];
        const { schema, execute, subscribe, contextFactory, parse, validate } =
          gateway.getEnveloped({
            ...ctx,
            socket,
            params: payload,
            ticket: ctx.extra.ticket,
            admitted: turn,
          });
        const document = parseValid(parse, validate, schema, payload.query);
        if (Array.isArray(document)) {
          turn();
          return document;
        }
        ids.set(id, NO_SEAT);
        options.onOperation?.(socket);
        const args = {
          schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? null,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const operation = getOperationAST(document, payload.operationName ?? null)?.operation;
        // A subscription holds its place only while it is set up: its events are the live
        // layer's work, paced there; a query or mutation holds it until its answer is out.
        if (operation === 'subscription' || socket.readyState !== socket.OPEN) turn();
        else ids.set(id, turn);
        return args;
      },
      onComplete: (ctx, id) => {
        const ids = operations.get(ctx.extra.socket);
        ids?.get(id)?.();
        ids?.delete(id);
      },
    },
    wss,
    options.keepAliveMs ?? 12_000,
  );
  return {
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** The document, or the errors of parsing or validating it (as every transport answers them). */
export function parseValid(
  parse: (source: string) => DocumentNode,
  validate: (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[],
  schema: GraphQLSchema,
  query: string,
): DocumentNode | GraphQLError[] {
  let document;
  try {
    document = parse(query);
  } catch (error) {
    return [error instanceof GraphQLError ? error : new GraphQLError('Syntax error')];
  }
  const errors = validate(schema, document);
  return errors.length > 0 ? [...errors] : document;
}

function destroyQuietly(this: Duplex): void {
  this.destroy();
}

/** A connection_init's or an operation's turn; null if the connection closed meanwhile. */
const admitted = (outcome: Release | Waiting | Refusal, socket: WebSocket) =>
  turnUnlessGone(outcome, socket, () => socket.readyState !== socket.OPEN);

/** Closes, and cuts the socket after CLOSE_GRACE_MS (ws would wait 30 s) holding a descriptor. */
function closeSoon(socket: WebSocket, code: number, reason: string): void {
  // Cut to MAX_REASON_BYTES (the reasons here are ASCII).
  const short = Buffer.byteLength(reason) <= MAX_REASON_BYTES;
  socket.close(code, short ? reason : `${reason.slice(0, MAX_REASON_BYTES - 3)}...`);
  setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
}

/** An origin CORS_ORIGINS allows, or the gateway's own (its Host), as over HTTP. */
function upgradeOriginAllowed(cors: CorsSettings, origin: string, host?: string): boolean {
  if (originAllowed(cors, origin)) return true;
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** A 403 before the handshake, saying how to allow the page (the origin shown only if plain). */
function refuseOrigin(socket: Duplex, origin: string): void {
  const shown = /^[\x21-\x7e]{1,200}$/.test(origin) ? origin : 'this origin';
  const body = refusalMessage(shown);
  socket.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nVary: Origin\r\nConnection: close\r\n\r\n${body}`,
  );
}
