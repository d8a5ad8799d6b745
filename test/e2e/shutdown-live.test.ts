/**
 * Shutdown with live subscriptions open, on the real process (dist/main.js): SIGTERM ends an SSE
 * stream without `event: complete` (so clients reconnect) and closes the WebSocket as "going
 * away", and the process still exits 0.
 */
import { once } from 'node:events';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { metricOf } from '../../support/live-fleet.js';
import { untilAsync } from '../../support/wait.js';

const AUTHORIZATION = `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`;
const QUERY = `subscription { messageAdded(tids: ["${DEMO_ACCOUNT.numbers[0]!.tid}"]) { id } }`;

let gateway: GatewayProcess;
beforeAll(async () => {
  gateway = await startGatewayProcess({ LIVE_POLL_MS: '200' });
});
afterAll(() => gateway.close());

describe('SIGTERM with live subscriptions open', () => {
  it('ends the SSE stream without complete and closes the WebSocket, then exits 0', async () => {
    const sse = await fetch(gateway.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: AUTHORIZATION,
      },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(sse.status).toBe(200);
    let sseText = '';
    const sseEnded = (async () => {
      const reader = sse.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'ended';
        sseText += value;
      }
    })();

    let connected: () => void = () => undefined;
    const wsConnected = new Promise<void>((resolve) => (connected = resolve));
    const ws = createClient({
      url: gateway.endpoint.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: AUTHORIZATION },
      retryAttempts: 0,
      on: { connected: () => connected() },
    });
    let wsError: unknown = null;
    const wsCompleted = new Promise<string>((resolve) => {
      ws.subscribe(
        { query: QUERY },
        {
          next: () => undefined,
          error: (error) => {
            wsError = error;
            resolve('error');
          },
          complete: () => resolve('completed'),
        },
      );
    });
    // Credentials accepted on the socket, and both subscriptions running.
    await wsConnected;
    await untilAsync(async () => (await metricOf(gateway, 'sms_live_subscriptions')) >= 2, 10_000);

    const exited = once(gateway.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    gateway.child.kill('SIGTERM');
    expect(await sseEnded).toBe('ended');
    // No `complete`: graphql-sse and GraphiQL would take it as final and never reconnect.
    expect(sseText).not.toContain('event: complete');
    const wsOutcome = await wsCompleted;
    // The server closes the socket as "going away" (1001) or normally (1000); anything else,
    // or no close at all, fails.
    if (wsOutcome === 'error') {
      expect([1000, 1001]).toContain((wsError as { code?: number }).code);
    }
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    await ws.dispose();
  });
});
