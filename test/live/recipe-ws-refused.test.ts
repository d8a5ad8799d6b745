/**
 * The graphql-ws reconnect recipe (support/recipes/live-ws.ts, shown in docs/live-updates.md)
 * stops at a 4403: refused credentials are answered the same every time, so it reports the close
 * once instead of retrying ten times.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { listen } from '../../src/start.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createLiveWsClient, watchOverWs } from '../../support/recipes/live-ws.js';
import { until } from '../../support/wait.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';

let simulator: RunningSimulator;
let test: TestGateway;
let url: string;
let upgrades = 0;
beforeAll(async () => {
  simulator = await startSimulator();
  test = createTestGateway(simulator.url, { live: { pollMs: 1_000 } });
  test.app.server.on('upgrade', () => (upgrades += 1));
  url = `ws://127.0.0.1:${((await listen(test.app)) as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  await test.app.endStreams();
  test.app.server.closeAllConnections();
  await new Promise((resolve) => test.app.server.close(resolve));
  await test.close();
  await simulator.close();
});

describe('the graphql-ws recipe', () => {
  it('reports a 4403 once, with its reason, and does not reconnect', async () => {
    const client = createLiveWsClient(url, 'Basic not-base64-at-all!', {
      webSocketImpl: WebSocket,
      retryWait: () => Promise.resolve(),
    });
    const errors: string[] = [];
    const stop = watchOverWs(client, ['TN-L-0001'], {
      onMessage: () => undefined,
      onResync: () => undefined,
      onError: (error) => errors.push(error.message),
    });
    await until(() => errors.length > 0, 5_000);
    // graphql-ws errors its subscribers only once it decided not to retry (a retried close is
    // silent, and retries here come at once): the error is the signal, no waiting for a
    // reconnect that cannot come.
    expect(errors).toEqual([expect.stringMatching(/^closed 4403: Malformed credentials/)]);
    expect(upgrades).toBe(1);
    stop();
    await client.dispose();
  });
});
