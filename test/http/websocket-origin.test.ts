/**
 * WebSocket upgrades obey CORS_ORIGINS like HTTP requests: a browser opens a WebSocket to any
 * host without a preflight, so the upgrade's `Origin` is the only place a page that may not call
 * can be stopped. Tested with the real clients (ws, and graphql-ws over it) against the gateway
 * on a real port.
 */
import { listen } from '../../src/start.js';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import {
  basicAuth,
  createTestGateway,
  type TestGateway,
  type TestGatewayOptions,
} from '../fixtures/harness.js';

const APP = 'https://app.example.com';

let simulator: RunningSimulator;
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(() => simulator.close());

async function served(
  options: TestGatewayOptions,
): Promise<{ test: TestGateway; url: string; host: string; close(): Promise<void> }> {
  const test = createTestGateway(simulator.url, { live: { pollMs: 1_000 }, ...options });
  const { port } = (await listen(test.app)) as AddressInfo;
  return {
    test,
    url: `ws://127.0.0.1:${port}/graphql`,
    host: `127.0.0.1:${port}`,
    async close() {
      await test.app.endStreams();
      test.app.server.closeAllConnections();
      await new Promise((resolve) => test.app.server.close(resolve));
      await test.close();
    },
  };
}

/** What the handshake of a WebSocket from a page at `origin` (none: a server's client) got. */
function handshake(url: string, origin?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, 'graphql-transport-ws', origin ? { origin } : {});
    socket.once('open', () => {
      socket.close();
      resolve({ status: 101, body: '' });
    });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

/** graphql-ws's client as a page at `origin` runs it: one query over the WebSocket. */
async function queryOverWs(url: string, origin: string): Promise<unknown> {
  class FromPage extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { origin });
    }
  }
  const client: Client = createClient({
    url,
    webSocketImpl: FromPage,
    connectionParams: { Authorization: basicAuth(DEMO_CREDENTIALS).authorization },
    retryAttempts: 0,
  });
  try {
    return await new Promise((resolve, reject) => {
      let result: unknown;
      client.subscribe(
        { query: '{ ownedNumbers { tid } }' },
        {
          next: (value) => (result = value),
          error: (error) =>
            reject(
              error instanceof Error
                ? error
                : new Error(`closed: ${(error as { code?: number }).code ?? String(error)}`),
            ),
          complete: () => resolve(result),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

describe('WebSocket upgrades and CORS_ORIGINS', () => {
  it('an allowed page streams; any other page is refused with 403 before the handshake', async () => {
    const gateway = await served({ corsOrigins: [APP] });
    try {
      const result = (await queryOverWs(gateway.url, APP)) as {
        data?: { ownedNumbers: unknown[] };
      };
      expect(result.data?.ownedNumbers.length).toBeGreaterThan(0);

      const refused = await handshake(gateway.url, 'https://evil.example.net');
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('CORS_ORIGINS=https://evil.example.net');
      await expect(queryOverWs(gateway.url, 'https://evil.example.net')).rejects.toThrow();
      // Sandboxed frames and file:// pages send `Origin: null`.
      expect((await handshake(gateway.url, 'null')).status).toBe(403);
    } finally {
      await gateway.close();
    }
  });

  it('a client with no Origin (a server) and a page of the gateway itself stay allowed', async () => {
    const gateway = await served({ corsOrigins: [APP] });
    try {
      expect((await handshake(gateway.url)).status).toBe(101);
      expect((await handshake(gateway.url, `http://${gateway.host}`)).status).toBe(101);
    } finally {
      await gateway.close();
    }
  });

  it('with no CORS_ORIGINS every page is refused, except pages on loopback in demo mode', async () => {
    const production = await served({});
    try {
      expect((await handshake(production.url, 'http://localhost:5173')).status).toBe(403);
      expect((await handshake(production.url)).status).toBe(101);
    } finally {
      await production.close();
    }
    const demo = await served({ allowLoopbackOrigins: true });
    try {
      const result = (await queryOverWs(demo.url, 'http://localhost:5173')) as {
        data?: { ownedNumbers: unknown[] };
      };
      expect(result.data?.ownedNumbers.length).toBeGreaterThan(0);
      expect((await handshake(demo.url, 'https://app.example.com')).status).toBe(403);
    } finally {
      await demo.close();
    }
  });

  it('CORS_ORIGINS=* lets any page connect, but not `Origin: null`', async () => {
    const gateway = await served({ corsOrigins: ['*'] });
    try {
      expect((await handshake(gateway.url, 'https://anywhere.example.org')).status).toBe(101);
      expect((await handshake(gateway.url, 'null')).status).toBe(403);
    } finally {
      await gateway.close();
    }
  });
});
