/**
 * The gateway's HTTP server and its connections: the platform's own limits, set deliberately
 * (docs/limits.md), and how a copy lets go of its connections when it drains (docs/deploy.md
 * "Shutdown").
 *
 * The drain resets nothing a client wrote, with or without a balancer in front. A connection is
 * closed only (a) right after a response that said `Connection: close`, (b) once it has been idle
 * for as long as the client was told it could stay (`Keep-Alive: timeout=`), (c) when it had no
 * request since the drain began (stopListening), (d) right after an event stream in flight
 * during the drain ends (see closeAfter), or (e) at the shutdown deadline, if idle. Node's own
 * `server.close()` does not stop the listening: it also closes every connection Node counts as
 * idle, and a connection accepted a moment ago is "idle" until its request's headers are parsed,
 * so a request already on the wire met a reset. It runs only once no connection is left.
 *
 * - Once draining starts (SIGTERM), every response carries `Connection: close`, those in flight
 *   included: each busy connection closes right after an answer, and clients and balancers open
 *   the next one elsewhere.
 * - stopListening() then closes the listening socket. The kernel resets the connections still
 *   queued on it, requests already written on them included; clients pinned to this copy (no
 *   balancer) reconnect after every answer, so that queue is never empty. So, for a moment, new
 *   requests are held unanswered: a client waiting for its answer opens no connection, the queue
 *   empties, the socket closes, and the held requests are answered, each with `Connection: close`.
 *   A client's next connection is then refused, before it writes anything.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { readFileSync } from 'node:fs';
import { Server as NetServer, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface ConnectionLimits {
  /** How long an idle keep-alive connection stays open; told to clients. */
  readonly keepAliveTimeoutMs: number;
  /** Connections held at once (see makeRoomOverCap); `null`: no cap. */
  readonly maxConnections?: number | null;
  readonly headersTimeoutMs?: number;
}

export type GatewayServer = ReturnType<typeof createGatewayServer>;

/** A request's headers arrive within this, or its connection is closed (slow-header floods). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request, body included, arrives within this (slow-body floods); responses are not bound. */
const REQUEST_TIMEOUT_MS = 30_000;
/** How often Node checks connections against those two (its default, 30 s, would add to both). */
const TIMEOUT_CHECK_MS = 1_000;
/** Requests that accept an answer as a stream (SSE, incremental delivery): see closeAfter. */
const STREAM_ACCEPT = /text\/event-stream|multipart\/mixed/i;
/** Before the listening socket closes: no new connection for this long... */
const QUIET_MS = 100;
/** ...or this long at most, while new requests wait. */
const HOLD_MAX_MS = 1_000;

export function createGatewayServer(listener: RequestListener, limits: ConnectionLimits) {
  let held: Array<() => void> | null = null;
  const server = createServer((request, response) => {
    if (held) held.push(() => listener(request, response));
    else listener(request, response);
  });
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  const headersTimeoutMs = limits.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    TIMEOUT_CHECK_MS;
  const overCap = makeRoomOverCap(server, limits.maxConnections ?? null);

  const sockets = new Set<Socket>();
  const lastActive = new WeakMap<Socket, number>();
  // A connection that never sends a byte would stay open for ever: it gets the same time.
  const awaitingFirstRequest = new WeakMap<Socket, NodeJS.Timeout>();
  let lastConnectionAt = 0;
  server.on('connection', (socket: Socket) => {
    lastConnectionAt = performance.now();
    lastActive.set(socket, lastConnectionAt);
    sockets.add(socket);
    // A client that has sent a byte is Node's to time out (with a 408).
    const silent = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, headersTimeoutMs).unref();
    awaitingFirstRequest.set(socket, silent);
    socket.once('close', () => {
      sockets.delete(socket);
      clearTimeout(silent);
    });
  });
  const firstRequestArrived = (request: IncomingMessage): void =>
    clearTimeout(awaitingFirstRequest.get(request.socket));
  // An upgraded socket is the WebSocket server's to end, with a close frame.
  server.prependListener('upgrade', (request: IncomingMessage) => {
    firstRequestArrived(request);
    sockets.delete(request.socket);
    overCap.upgraded(request.socket);
  });

  const inFlight = new Set<ServerResponse>();
  /** Event streams in flight: their connection, for the drain (see closeAfter). */
  const streams = new WeakMap<ServerResponse, Socket>();
  let drainStartedAt: number | null = null;
  const closeAfter = (response: ServerResponse): void => {
    if (!response.headersSent) response.setHeader('connection', 'close');
    // A stream begun before the drain said nothing of closing, and one begun since may say
    // keep-alive over it (yoga's SSE and multipart answers do): FIN once it ends, before its
    // client reconnects (graphql-sse waits 0.25 s).
    const socket = streams.get(response);
    if (!socket) return;
    response.once('finish', () => {
      // Node has let go of the connection by now, unless a pipelined request follows.
      if (!response.chunkedEncoding || (socket as Socket & { _httpMessage?: unknown })._httpMessage)
        return;
      socket.end(() => socket.destroy());
    });
  };
  // Before the gateway's own listener, so the header is in place before it answers.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    firstRequestArrived(request);
    lastActive.set(request.socket, performance.now());
    overCap.requestStarted(request.socket, request, response);
    if (STREAM_ACCEPT.test(request.headers.accept ?? '')) streams.set(response, request.socket);
    if (drainStartedAt !== null) closeAfter(response);
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
  });

  /** No connection for QUIET_MS, or HOLD_MAX_MS passed; each check after an event-loop poll. */
  const quiet = async (): Promise<void> => {
    const giveUpAt = performance.now() + HOLD_MAX_MS;
    for (;;) {
      await delay(QUIET_MS / 4);
      await new Promise((resolve) => setImmediate(resolve));
      const now = performance.now();
      if (now - lastConnectionAt >= QUIET_MS || now >= giveUpAt) return;
    }
  };

  let listenerClosed: Promise<void> | null = null;
  let closed: Promise<void> = Promise.resolve();
  return {
    server,
    get draining(): boolean {
      return drainStartedAt !== null;
    },
    /** The drain: every response from now on, in flight or new, closes its connection once sent. */
    closeAfterEachResponse(): void {
      drainStartedAt ??= performance.now();
      for (const response of inFlight) closeAfter(response);
    },
    /** Stops listening (see above) and closes connections idle since the drain began. */
    stopListening(): Promise<void> {
      drainStartedAt ??= performance.now();
      listenerClosed ??= (async () => {
        held = [];
        await quiet();
        // net.Server's close: stop listening, call back once the last connection has ended.
        closed = new Promise<void>((resolve) =>
          NetServer.prototype.close.call(server, () => resolve()),
        );
        const waiting = held;
        held = null;
        for (const answer of waiting) answer();
        // Idle through the whole readiness delay: the balancer took the copy out and clients drop
        // idle connections sooner (undici 4 s); 65 s keep-alive would hold rollouts.
        for (const socket of sockets) {
          const busy = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
          if (!busy && (lastActive.get(socket) ?? 0) < drainStartedAt!) socket.destroy();
        }
      })();
      return listenerClosed;
    },
    async allClosed(): Promise<void> {
      await this.stopListening();
      await closed;
      // Node's own close, now that no connection is left to reset: net.Server's leaves the timer
      // checking headersTimeout and requestTimeout (connectionsCheckingInterval) running.
      server.close();
    },
    /** The deadline's last resort: closes idle connections; returns the requests still running. */
    closeRemaining(): number {
      server.closeIdleConnections();
      return inFlight.size;
    },
  };
}

/**
 * Past `max` connections, close the longest waiting for headers, else the oldest still sending its
 * body; only if none, the newcomer gets 503 (refusing let trickling floods hold the cap).
 */
function makeRoomOverCap(server: Server, max: number | null) {
  if (max === null) return { requestStarted: () => undefined, upgraded: () => undefined };
  let open = 0;
  /** Connections without a request in progress, the longest waiting first. */
  const waiting = new Set<Socket>();
  /** Requests in progress per connection (pipelined ones overlap). */
  const busy = new WeakMap<Socket, number>();
  /** Connections whose request was still arriving when it started, oldest first. */
  const receiving = new Map<Socket, IncomingMessage>();
  const slowestBody = (): Socket | undefined => {
    for (const [socket, request] of receiving) {
      if (!request.complete) return socket;
      receiving.delete(socket);
    }
    return undefined;
  };
  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
      waiting.delete(socket);
      receiving.delete(socket);
    });
    if (open > max) {
      const oldest = waiting.values().next().value ?? slowestBody();
      if (oldest === undefined) {
        socket.write(OVER_CAP_RESPONSE, () => socket.destroy());
        return;
      }
      waiting.delete(oldest);
      receiving.delete(oldest);
      oldest.destroy();
    }
    waiting.add(socket);
  });
  return {
    /** A request's headers are complete: its connection is busy until the response is done. */
    requestStarted(socket: Socket, request: IncomingMessage, response: ServerResponse) {
      waiting.delete(socket);
      if (!request.complete) receiving.set(socket, request);
      busy.set(socket, (busy.get(socket) ?? 0) + 1);
      response.once('close', () => {
        receiving.delete(socket);
        const left = (busy.get(socket) ?? 1) - 1;
        busy.set(socket, left);
        if (left === 0 && !socket.destroyed) waiting.add(socket);
      });
    },
    /** The socket is a WebSocket's now (src/http/websocket.ts bounds those). */
    upgraded(socket: Socket) {
      waiting.delete(socket);
    },
  };
}

const OVER_CAP_BODY = 'This gateway copy holds all the connections it can take; try again.';
const OVER_CAP_RESPONSE =
  'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n' +
  `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(OVER_CAP_BODY)}\r\n\r\n` +
  OVER_CAP_BODY;

/** File descriptors kept back beside the service's pool: Redis, logs, the runtime. */
const RESERVED_DESCRIPTORS = 128;

/** Open-file limit (/proc/self/limits, else no cap) less pool and reserve, at least 64. */
export function defaultMaxConnections(
  upstreamConnections: number,
  limitsFile = '/proc/self/limits',
): number | null {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    if (!Number.isFinite(soft)) return null;
    return Math.max(64, soft - upstreamConnections - RESERVED_DESCRIPTORS);
  } catch {
    return null;
  }
}
