/**
 * graphql-ws (protocol graphql-transport-ws) over WebSocket at /graphql, beside yoga's HTTP and
 * SSE: the same schema, plugins and context, run through yoga's envelop. Browsers cannot set
 * headers on a WebSocket, so credentials come in `connectionParams`, as
 * `{ "Authorization": "Basic ..." }` or `{ "X-Sys-Id": ..., "X-Auth-Token": ... }` (any case);
 * a connection without well-formed credentials is closed at once (4403 Forbidden).
 */
import type { Server } from 'node:http';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { readCredentials } from '../core/credentials.js';
import type { Gateway } from './server.js';
import { SUBSCRIPTION_LIMIT } from '../live/hub.js';

export interface WebSocketOptions {
  readonly path: string;
  /** Operations one connection may have running at once. */
  readonly maxPerConnection: number;
  /** Keep-alive ping interval. @default 12000 */
  readonly keepAliveMs?: number;
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
  const wss = new WebSocketServer({ server, path: options.path });
  const running = new WeakMap<WebSocket, Set<string>>();
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Envelope).execute(args) as never,
      subscribe: (args) => (args.rootValue as Envelope).subscribe(args) as never,
      onConnect: (ctx) => {
        const accepted =
          readCredentials(headersFromConnectionParams(ctx.connectionParams)).kind === 'present';
        options.onConnected?.(ctx.extra.socket, accepted);
        return accepted;
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
            request: { headers: headersFromConnectionParams(ctx.connectionParams) },
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
