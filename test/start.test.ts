/**
 * src/start.ts: createApp starts what the Config turns on (here demo mode's simulator) and wires
 * the app; listen() listens, and a failure to listen goes to its caller alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { createApp, listen } from '../src/start.js';
import type { App } from '../src/app.js';
import { DEMO_CREDENTIALS } from '../src/simulator/index.js';
import { basicAuth } from './fixtures/harness.js';

let app: App;
let url: string;

beforeAll(async () => {
  // No UPSTREAM_URL: demo mode, the built-in simulator behind the gateway.
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
  app = await createApp(config);
  const { port } = await listen(app);
  url = `http://127.0.0.1:${port}/graphql`;
});
afterAll(async () => {
  await app.connections.stopListening();
  await app.close();
});

describe('createApp and listen', () => {
  it('starts the simulator in demo mode and answers over the listening socket', async () => {
    expect(app.simulator).not.toBeNull();
    expect(app.upstreamUrl.href).toBe(new URL(app.simulator!.url).href);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
      body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data?: { ownedNumbers: unknown[] } };
    expect(body.data?.ownedNumbers.length).toBeGreaterThan(0);
  });

  it('rejects a port in use to its caller, and leaves the server as it was', async () => {
    const port = Number(new URL(url).port);
    const config = loadConfig({
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      UPSTREAM_URL: app.upstreamUrl.href,
    });
    const second = await createApp(config);
    const listenersBefore = second.server.listenerCount('error');
    await expect(listen(second)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(second.server.listenerCount('error')).toBe(listenersBefore);
    await second.close();
  });
});
