/**
 * A client that resets its connection right after sending a WebSocket upgrade must cost the
 * gateway nothing: Node hands an upgrade's socket over without its own `error` listener, so a
 * reset before the WebSocket library takes it over (the upgrade refused for its Origin, or still
 * waiting for admission) was an uncaught ECONNRESET that ended the process.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveGateway, type ServedGateway } from '../clients/served-gateway.js';

let served: ServedGateway;
let port: number;
beforeAll(async () => {
  served = await serveGateway({
    live: { pollMs: 1_000 },
    corsOrigins: ['https://app.example.com'],
  });
  port = Number(new URL(served.origin).port);
});
afterAll(() => served.close());

/** Sends an upgrade request, then resets the connection (RST, not FIN) once `after` ms passed. */
function upgradeThenReset(origin: string, after: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        'GET /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
          `Sec-WebSocket-Protocol: graphql-transport-ws\r\nOrigin: ${origin}\r\n\r\n`,
      );
      setTimeout(() => socket.resetAndDestroy(), after);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

describe('WebSocket upgrades reset by their client', () => {
  it('leave the gateway serving, whether refused for their origin or let through', async () => {
    for (let round = 0; round < 20; round += 1) {
      await Promise.all([
        upgradeThenReset('https://elsewhere.example', round % 3),
        upgradeThenReset('https://app.example.com', round % 3),
      ]);
    }
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    expect(response.status).toBe(200);
    expect(served.test.app.server.listening).toBe(true);
  });
});
