/**
 * WebSocket connections in the log: a line when its credentials are accepted or refused, one when
 * it closes. Never its connectionParams (they carry credentials).
 */
import type { Logger } from './logger.js';

export function webSocketLog(logger: Logger) {
  const open = new WeakMap<object, { readonly openedAt: number; operations: number }>();
  return {
    /** After the connection's init message: `accepted` false when its credentials were refused. */
    onConnected(socket: object, accepted: boolean): void {
      open.set(socket, { openedAt: performance.now(), operations: 0 });
      if (accepted) logger.info({ transport: 'websocket' }, 'websocket connected');
      else logger.info({ transport: 'websocket', accepted }, 'websocket refused');
    },
    onOperation(socket: object): void {
      const connection = open.get(socket);
      if (connection) connection.operations += 1;
    },
    onClosed(socket: object, code: number, reason: string): void {
      const connection = open.get(socket);
      open.delete(socket);
      // A socket closed before its init message never had a connected line: say so.
      logger.info(
        {
          transport: 'websocket',
          code,
          // A client's close reason is free text: bounded, and only as a detail.
          ...(reason ? { reason: reason.slice(0, 120) } : {}),
          ...(connection
            ? {
                durationMs: Math.round(performance.now() - connection.openedAt),
                operations: connection.operations,
              }
            : { initialised: false }),
        },
        'websocket closed',
      );
    },
  };
}
