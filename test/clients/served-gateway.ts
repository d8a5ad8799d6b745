/**
 * The gateway on a real port of 127.0.0.1, as a browser or a copied client set-up reaches it:
 * HTTP, SSE and graphql-ws at /graphql, live updates on, the simulator behind it. Shared by the
 * client tests and the example app's test.
 */
import { listen } from '../../src/start.js';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  startRecordingUpstream,
  type RecordingUpstream,
  type RecordingUpstreamOptions,
} from '../../support/recording-upstream.js';
import {
  createTestGateway,
  type TestGateway,
  type TestGatewayOptions,
} from '../fixtures/harness.js';

export interface ServedGateway {
  /** e.g. http://127.0.0.1:39211 (no path). */
  readonly origin: string;
  readonly simulator: RecordingUpstream;
  readonly test: TestGateway;
  /** WebSocket upgrade requests received so far (each graphql-ws connection attempt is one). */
  upgrades(): number;
  /** Cuts every open WebSocket at the TCP level (close 1006 for the client), as a lost network does. */
  dropWebSockets(): void;
  close(): Promise<void>;
}

export async function serveGateway(
  options: TestGatewayOptions = {},
  simulatorOptions: RecordingUpstreamOptions = {},
): Promise<ServedGateway> {
  const simulator = await startRecordingUpstream(simulatorOptions);
  const test = createTestGateway(simulator.url, { live: { pollMs: 100 }, ...options });
  let upgrades = 0;
  const sockets = new Set<Duplex>();
  test.app.server.on('upgrade', (_request: IncomingMessage, socket: Duplex) => {
    upgrades += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const { port } = (await listen(test.app)) as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    simulator,
    test,
    upgrades: () => upgrades,
    dropWebSockets: () => {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      await test.app.endStreams();
      test.app.server.closeAllConnections();
      await new Promise((resolve) => test.app.server.close(resolve));
      await test.close();
      await simulator.close();
    },
  };
}
