/**
 * graphql-ws (protocol graphql-transport-ws) over WebSocket at /graphql, beside yoga's HTTP and
 * SSE: the same schema, plugins and context, run through yoga's envelop. Browsers cannot set
 * headers on a WebSocket, so credentials come in `connectionParams`, as
 * `{ "Authorization": "Basic ..." }` or `{ "X-Sys-Id": ..., "X-Auth-Token": ... }` (any case);
 * a connection without well-formed credentials is closed at once (4403, with a reason naming the
 * shape expected).
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
 * tenant's turn while the copy is busy (`admit`, as an HTTP request: the account once its pair is
 * accepted, else the pair's own line in the `unverified` group), holding a place until its
 * verdict; and a connection not yet verified is closed after VERIFICATION_WINDOW_MS (4408), and
 * the oldest of them once MAX_UNVERIFIED_CONNECTIONS are open (1013) to make room for a new one:
 * idle sockets of invented pairs, reconnecting, never keep a real account's socket out (soak
 * `idle-invented-ws`).
 *
 * Browsers let any page open a WebSocket to any host (no preflight, no CORS), so the upgrade's
 * `Origin` is checked here against the same CORS_ORIGINS as HTTP: a page whose fetches would be
 * refused gets 403 before the handshake. No `Origin` (a server's client) and the gateway's own
 * origin stay allowed, as for HTTP.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import type { ConnectionInitMessage } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Credentials } from '../core/credentials.js';
import { Identities, type Identity } from '../core/identity.js';
import type { Gateway } from './server.js';
import { SUBSCRIPTION_LIMIT } from '../live/hub.js';
import { isRefusal, type Refusal, type Release, type Waiting } from '../traffic/fair-admission.js';
import type { HeldStreams } from '../traffic/held-streams.js';
import { issueTicket, type Ticket } from '../traffic/ticket.js';
import { originAllowed, refusalMessage, type CorsSettings } from './cors.js';

/** Largest `connection_init` message: credentials need a few hundred bytes. */
export const MAX_CONNECTION_INIT_BYTES = 16 * 1024;

/**
 * Connections not yet verified, this copy together: past it the oldest is closed to make room (an
 * idle one, or one kept waiting to hold a place). Large enough that a flood of this many pairs
 * waits its turns rather than churning: at 256, 1,000 reconnecting clients of invented pairs
 * evicted one another (and real accounts' connections, 1013) faster than their turns came.
 */
export const MAX_UNVERIFIED_CONNECTIONS = 1024;
/**
 * From the upgrade to the verdict on its connection_init: the wait for its turn (at most
 * FIXED_ADMISSION_MAX_WAIT_MS, 5 s) and one verification call. graphql-ws closes a connection
 * with no connection_init sooner (3 s, 4408).
 */
export const VERIFICATION_WINDOW_MS = 10_000;
/** A closed connection's socket is cut this long after the close frame if the client sends none. */
const CLOSE_GRACE_MS = 1_000;

/** WebSocket close reasons are limited to 123 bytes (RFC 6455 5.5). */
const MAX_REASON_BYTES = 123;

const REFUSED_CREDENTIALS = 'The SMS service refused the credentials';

export const CLOSE_REASON_MISSING_CREDENTIALS =
  'Credentials required: connectionParams {"Authorization":"Basic base64(sys_id:auth_token)"}';

export interface WebSocketOptions {
  readonly path: string;
  /** Operations one connection may have running at once. */
  readonly maxPerConnection: number;
  /** Slots for streams, shared with graphql-sse (one cap, one share per account). @default no cap */
  readonly held?: HeldStreams;
  /** Connections not yet verified at once; past it the oldest is closed. @default MAX_UNVERIFIED_CONNECTIONS */
  readonly maxUnverified?: number;
  /** @default VERIFICATION_WINDOW_MS */
  readonly verificationWindowMs?: number;
  /** Largest frame read, in bytes (MAX_BODY_BYTES). @default 100000 */
  readonly maxPayloadBytes?: number;
  /**
   * Which pages may connect (CORS_ORIGINS and demo mode's loopback, as for HTTP).
   * @default any page: checked only when given
   */
  readonly cors?: CorsSettings;
  /** Keep-alive ping interval. @default 12000 */
  readonly keepAliveMs?: number;
  /**
   * Admission (src/traffic/fair-admission.ts) of each connection_init with credentials, told them
   * as request headers: it takes its tenant's turn and holds the place until its verdict (from
   * memory, or one verification call), then holds none while the connection stays open.
   * @default every connection_init goes in at once
   */
  readonly admit?: (identity: Identity) => Release | Waiting | Refusal;
  /**
   * Whether the service accepts a connection's credentials (memory first, else one shared call):
   * a connection_init with refused credentials is closed (4403) instead of held open.
   * @default every well-formed pair is kept
   */
  readonly verify?: (credentials: Credentials) => Promise<boolean>;
  /** What this copy remembers of a pair's credentials (memory only, no call). @default unknown */
  readonly verdictOf?: (pair: string) => 'accepted' | 'refused' | 'unknown';
  /** How connectionParams' credentials are read and named. @default this process's names */
  readonly identities?: Identities;
  /** Connection events, for the log (src/observability/connection-log.ts). */
  readonly onConnected?: (socket: WebSocket, accepted: boolean) => void;
  readonly onOperation?: (socket: WebSocket) => void;
  readonly onClosed?: (socket: WebSocket, code: number, reason: string) => void;
}

export interface AttachedWebSocket {
  close(): Promise<void>;
}

/** The credential headers a connection's `connectionParams` carry, as request headers. */
export function headersFromConnectionParams(params: unknown): Headers {
  const headers = new Headers();
  if (!params || typeof params !== 'object') return headers;
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    const lower = name.toLowerCase();
    if (
      typeof value === 'string' &&
      (lower === 'authorization' || lower === 'x-sys-id' || lower === 'x-auth-token')
    ) {
      try {
        headers.set(lower, value);
      } catch {
        // A value no header could carry: left out, so the credentials read as malformed or missing.
      }
    }
  }
  return headers;
}

interface Envelope {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

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
    // Node hands an upgrade's socket over without an `error` listener, and ws adds its own only
    // once it handles the upgrade: a client resetting before then (refused for its origin, or
    // waiting for admission) would be an uncaught ECONNRESET that ends the process.
    socket.on('error', destroyQuietly);
    const origin = request.headers.origin;
    if (options.cors && origin !== undefined && !upgradeOriginAllowed(options.cors, request)) {
      refuseOrigin(socket, origin);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      // ws listens for the socket's errors from here on.
      socket.off('error', destroyQuietly);
      wss.emit('connection', ws, request);
    });
  });
  const maxUnverified = options.maxUnverified ?? MAX_UNVERIFIED_CONNECTIONS;
  const windowMs = options.verificationWindowMs ?? VERIFICATION_WINDOW_MS;
  /** Connections not yet verified, oldest first, each with its window's timer. */
  const unverified = new Map<WebSocket, NodeJS.Timeout>();
  const verifiedNow = (socket: WebSocket, release: () => void): void => {
    clearTimeout(unverified.get(socket));
    unverified.delete(socket);
    socket.once('close', release);
  };
  const running = new WeakMap<WebSocket, Set<string>>();
  // The size of each connection's first message (its connection_init), read before graphql-ws.
  const firstMessageBytes = new WeakMap<WebSocket, number>();
  wss.on('connection', (socket) => {
    // Room for a new connection before it can prove anything, as for HTTP connections
    // (src/http/connections.ts): the one waiting longest has held a place longest for nothing.
    if (unverified.size >= maxUnverified) {
      const oldest = unverified.keys().next();
      if (!oldest.done) {
        clearTimeout(unverified.get(oldest.value));
        unverified.delete(oldest.value);
        closeSoon(oldest.value, 1013, 'Too many connections awaiting verification; try again');
      }
    }
    const window = setTimeout(() => {
      unverified.delete(socket);
      closeSoon(socket, 4408, `connection_init not verified within ${windowMs} ms`);
    }, windowMs);
    window.unref();
    unverified.set(socket, window);
    socket.once('close', () => {
      clearTimeout(unverified.get(socket));
      unverified.delete(socket);
    });
    socket.once('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      firstMessageBytes.set(socket, byteLength(data));
    });
    // ws closes a connection whose frame is too large (1009) and then reports it as an error;
    // graphql-ws logs every socket error to the console as an internal one. A client's oversized
    // frame is neither, so once graphql-ws has attached its listener it is replaced by a quiet one.
    // ws would then read (and drop) the rest of the frame while it waits for the client's close,
    // which a client sending 90 MB sends only after them: the socket is cut once the 1009 is out.
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
        const bytes = firstMessageBytes.get(socket) ?? 0;
        if (bytes > maxInitBytes) {
          options.onConnected?.(socket, false);
          socket.close(4413, `connection_init larger than ${maxInitBytes} bytes`);
          return false;
        }
        // The connection's ticket, for every operation it runs (onSubscribe).
        const ticket = issueTicket(identities, headersFromConnectionParams(ctx.connectionParams));
        ctx.extra.ticket = ticket;
        const read = ticket.identity;
        if (read.kind === 'present') {
          // Invented credentials hold nothing: 1,000 idle sockets of made-up pairs kept alive by
          // pings refused real accounts' connections (1013). An outage is not a refusal: the
          // subscription's own check then answers.
          const verify = options.verify ?? (() => Promise.resolve(true));
          // A pair refused lately is closed without a turn (no call: memory); one never seen
          // takes the unverified class's turn and holds it until its verdict, so invented pairs'
          // verifications run a seat at a time, never all at once beside the bystanders.
          const known = options.verdictOf?.(read.pair) ?? 'unknown';
          let accepted: boolean | undefined =
            known === 'unknown' ? undefined : known === 'accepted';
          const turn =
            accepted === false ? noop : await admitted(options.admit?.(read) ?? noop, socket);
          if (turn === null) return false;
          if (isRefusal(turn)) {
            options.onConnected?.(socket, false);
            closeSoon(socket, 1013, `The gateway is busy; retry after ${turn.retryAfterSeconds} s`);
            return false;
          }
          // The turn lasts until the verdict, as an HTTP request's place lasts until its answer.
          accepted ??= await verify(read.credentials).catch(() => true);
          turn();
          options.onConnected?.(socket, accepted);
          if (socket.readyState !== socket.OPEN) return false;
          if (!accepted) {
            closeSoon(socket, 4403, REFUSED_CREDENTIALS);
            return false;
          }
          const slot = options.held?.hold(read.account) ?? noop;
          if (typeof slot !== 'function') {
            closeSoon(socket, 1013, options.held?.message(slot) ?? '');
            return false;
          }
          verifiedNow(socket, slot);
          return true;
        }
        options.onConnected?.(socket, false);
        socket.close(
          4403,
          closeReason(
            read.kind === 'missing'
              ? CLOSE_REASON_MISSING_CREDENTIALS
              : `Malformed credentials in connectionParams: ${read.reason}`,
          ),
        );
        return false;
      },
      onClose: (ctx, code, reason) => options.onClosed?.(ctx.extra.socket, code ?? 0, reason ?? ''),
      onSubscribe: async (ctx, id, payload) => {
        let ids = running.get(ctx.extra.socket);
        if (!ids) running.set(ctx.extra.socket, (ids = new Set()));
        if (ids.size >= options.maxPerConnection) {
          return [
            new GraphQLError(
              `This connection already runs ${options.maxPerConnection} operations, the most allowed; complete one first`,
              { extensions: { code: SUBSCRIPTION_LIMIT } },
            ),
          ];
        }
        const { schema, execute, subscribe, contextFactory, parse, validate } =
          gateway.getEnveloped({
            ...ctx,
            req: ctx.extra.request,
            socket: ctx.extra.socket,
            params: payload,
            ticket: ctx.extra.ticket,
          });
        let document;
        try {
          document = parse(payload.query);
        } catch (error) {
          return [error instanceof GraphQLError ? error : new GraphQLError('Syntax error')];
        }
        const errors = validate(schema, document);
        if (errors.length > 0) return errors;
        ids.add(id);
        options.onOperation?.(ctx.extra.socket);
        return {
          schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? null,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
      },
      onComplete: (ctx, id) => {
        running.get(ctx.extra.socket)?.delete(id);
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

const noop: Release = () => undefined;

function destroyQuietly(this: Duplex): void {
  this.destroy();
}

/**
 * Waits for a connection_init's turn: its place, or a refusal; null once the connection closed
 * meanwhile (it leaves its line, and a place granted too late is handed back).
 */
async function admitted(
  outcome: Release | Waiting | Refusal,
  socket: WebSocket,
): Promise<Release | Refusal | null> {
  if (typeof outcome === 'function' || isRefusal(outcome)) return outcome;
  const leave = (): void => outcome.cancel();
  socket.once('close', leave);
  const granted = await outcome.outcome;
  socket.off('close', leave);
  if (socket.readyState === socket.OPEN) return granted;
  if (typeof granted === 'function') granted();
  return null;
}

/**
 * Closes with a close frame, and cuts the socket if the client has not answered it within
 * CLOSE_GRACE_MS (ws would wait 30 s): a closed connection no longer holds a place in either
 * count, so it must not hold a file descriptor for long either.
 */
function closeSoon(socket: WebSocket, code: number, reason: string): void {
  socket.close(code, closeReason(reason));
  setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
}

/**
 * Whether the page that opened this WebSocket may use it: an origin CORS_ORIGINS allows, or the
 * gateway's own (its Host), whose pages need no CORS grant over HTTP either.
 */
export function upgradeOriginAllowed(cors: CorsSettings, request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  if (originAllowed(cors, origin)) return true;
  try {
    return request.headers.host !== undefined && new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** A 403 before the WebSocket handshake, saying how the operator would allow the page. */
function refuseOrigin(socket: Duplex, origin: string): void {
  // The origin is echoed only when it is plain printable ASCII (no header or body injection).
  const shown = /^[\x21-\x7e]{1,200}$/.test(origin) ? origin : 'this origin';
  const body = refusalMessage(shown);
  socket.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nVary: Origin\r\nConnection: close\r\n\r\n${body}`,
  );
}

function byteLength(data: Buffer | ArrayBuffer | Buffer[]): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return data.byteLength;
}

/** A close reason cut to the 123 bytes a close frame can carry (the reasons here are ASCII). */
function closeReason(reason: string): string {
  return Buffer.byteLength(reason) <= MAX_REASON_BYTES
    ? reason
    : `${reason.slice(0, MAX_REASON_BYTES - 3)}...`;
}
