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

  it("sets each demo number's webhook to its doorbell, so an arrival rings: delivered well within LIVE_POLL_MS", async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
      body: JSON.stringify({ query: '{ ownedNumbers { tid webhook doorbellUrl } }' }),
    });
    const { data } = (await response.json()) as {
      data: { ownedNumbers: Array<{ tid: string; webhook: string; doorbellUrl: string }> };
    };
    const [first] = data.ownedNumbers;
    const origin = new URL(url).origin;
    expect(first!.doorbellUrl.startsWith(`${origin}/hooks/ring/`)).toBe(true);
    expect(data.ownedNumbers.every((n) => n.webhook === n.doorbellUrl)).toBe(true);

    const abort = new AbortController();
    const stream = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...basicAuth(DEMO_CREDENTIALS),
      },
      body: JSON.stringify({
        query: `subscription { messageAdded(tids: ["${first!.tid}"]) { body } }`,
      }),
      signal: abort.signal,
    });
    try {
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      // Past the first look and the ring gap after it: the ring alone explains a fast delivery.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const arrived = performance.now();
      app.simulator!.deliver(DEMO_CREDENTIALS.sysId, first!.tid, 'rung in demo mode');
      let text = '';
      while (!text.includes('rung in demo mode')) text += (await reader.read()).value ?? '';
      expect(performance.now() - arrived).toBeLessThan(app.config.live.pollMs / 2);
    } finally {
      abort.abort();
    }
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
