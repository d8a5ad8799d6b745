/**
 * The HTTP connections of the gateway's server, and how a copy lets go of them when it drains
 * (docs/deploy.md "Shutdown"):
 *
 * - Idle keep-alive connections stay open KEEP_ALIVE_TIMEOUT_MS (65 s by default): longer than a
 *   load balancer keeps its own idle ones (ALB and nginx 60 s), so the balancer closes first and
 *   never sends a request on a connection the gateway is closing.
 * - Once draining starts (SIGTERM), every response carries `Connection: close`, those in flight
 *   included: each connection closes right after an answer, between requests, where closing
 *   races nothing. Clients and balancers open the next one elsewhere.
 * - Then stopAccepting() stops listening and closes what is left: connections that stayed idle
 *   through the whole readiness delay (the balancer has taken the copy out by then), and each
 *   other one as soon as its last response is sent.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface ServerConnections {
  /** From now on every response, in flight or new, closes its connection once sent. */
  closeAfterEachResponse(): void;
  /** Stops accepting connections; resolves once every connection has closed. */
  stopAccepting(): Promise<void>;
}

/** How often connections are checked for idleness while the server closes. */
const IDLE_SWEEP_MS = 50;

export function manageConnections(
  server: Server,
  options: { readonly keepAliveTimeoutMs: number },
): ServerConnections {
  server.keepAliveTimeout = options.keepAliveTimeoutMs;
  // A request's headers may take as long as a connection may idle, plus a margin: Node closes a
  // connection whose headers are late, and must not do so before the keep-alive timeout would.
  server.headersTimeout = options.keepAliveTimeoutMs + 1_000;

  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const closeAfter = (response: ServerResponse): void => {
    if (!response.headersSent) response.setHeader('connection', 'close');
  };
  // Before the gateway's own listener, so the header is in place before it answers.
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (draining) closeAfter(response);
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
  });

  let stopped: Promise<void> | null = null;
  return {
    closeAfterEachResponse() {
      draining = true;
      for (const response of inFlight) closeAfter(response);
    },
    stopAccepting() {
      draining = true;
      stopped ??= new Promise<void>((resolve) => {
        // A response whose headers left before draining (a stream) keeps its connection open
        // after it ends: closed by the sweep as soon as it is idle.
        const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
      return stopped;
    },
  };
}
