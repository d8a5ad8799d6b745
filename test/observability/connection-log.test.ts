/** WebSocket lines: connected or refused, then closed with its code, duration and operations. */
import { describe, expect, it } from 'vitest';
import { webSocketLog } from '../../src/observability/connection-log.js';
import { captureLogs } from '../fixtures/captured-logs.js';

describe('webSocketLog', () => {
  it('logs a connection once accepted, then its close with how long it lasted and what it ran', () => {
    const { logger, logged } = captureLogs();
    const hooks = webSocketLog(logger);
    const socket = {};
    hooks.onConnected(socket, true);
    hooks.onOperation(socket);
    hooks.onOperation(socket);
    hooks.onClosed(socket, 1000, 'bye');
    expect(logged('websocket connected')).toHaveLength(1);
    const [closed] = logged('websocket closed');
    expect(closed).toMatchObject({
      transport: 'websocket',
      code: 1000,
      reason: 'bye',
      operations: 2,
    });
    expect(closed?.durationMs).toEqual(expect.any(Number));
  });

  it('says refused for refused credentials, and uninitialised for a socket closed before its init', () => {
    const { logger, logged } = captureLogs();
    const hooks = webSocketLog(logger);
    const refused = {};
    hooks.onConnected(refused, false);
    expect(logged('websocket refused')).toEqual([
      expect.objectContaining({ transport: 'websocket', accepted: false }),
    ]);
    hooks.onClosed({}, 4408, '');
    expect(logged('websocket closed')[0]).toMatchObject({ code: 4408, initialised: false });
    expect(logged('websocket closed')[0]).not.toHaveProperty('reason');
  });

  it("bounds a client's free-text close reason", () => {
    const { logger, logged } = captureLogs();
    const hooks = webSocketLog(logger);
    const socket = {};
    hooks.onConnected(socket, true);
    hooks.onClosed(socket, 4000, 'x'.repeat(500));
    expect(logged('websocket closed')[0]?.reason).toHaveLength(120);
  });
});
