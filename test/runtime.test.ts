/**
 * src/runtime.ts: the process's life. A drain ends with exit code 0 once the requests in flight are
 * answered, and no timer of the gateway outlives it: every one started while the app lived (the
 * loop monitor's, Node's connection checks, live polling, the simulator's) is cleared by stop.
 */
import { createHook } from 'node:async_hooks';
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { startRuntime } from '../src/runtime.js';
import { createApp } from '../src/start.js';
import { DEMO_CREDENTIALS } from '../src/simulator/index.js';
import { stopProcessLoop } from '../src/traffic/loop-monitor.js';
import { until } from '../support/wait.js';
import { basicAuth } from './fixtures/harness.js';

/** Timers (setTimeout, setInterval) created since the hook was enabled and not yet gone. */
const timers = new Map<number, string>();
const hook = createHook({
  init(id, type) {
    const stack = new Error().stack ?? '';
    // The test's own waiting is not the gateway's.
    if (type === 'Timeout' && !stack.includes('support/wait')) timers.set(id, stack);
  },
  destroy: (id) => void timers.delete(id),
});
afterAll(() => void hook.disable());

/** One POST (node:http: no client-side timers); resolves at its answer's head, with its body. */
function post(port: number, query: string, accept = 'application/json') {
  return new Promise<{ status: number; body: Promise<string> }>((resolve, reject) => {
    const headers = { 'content-type': 'application/json', accept, ...basicAuth(DEMO_CREDENTIALS) };
    const sent = request({ port, host: '127.0.0.1', method: 'POST', path: '/graphql', headers });
    sent.on('error', reject);
    sent.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      const body = new Promise<string>((ended) => response.on('end', () => ended(text)));
      resolve({ status: response.statusCode ?? 0, body });
    });
    sent.end(JSON.stringify({ query }));
  });
}

describe('startRuntime', () => {
  it('drains to exit code 0, and after it no timer the gateway started is left', async () => {
    // A monitor already running (another file's, in this worker) would hide its timer from the hook.
    stopProcessLoop();
    hook.enable();
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
    const runtime = await startRuntime(await createApp(config));
    const { port } = runtime.address;
    const answer = await post(port, '{ ownedNumbers { tid } }');
    expect(answer.status).toBe(200);
    const { data } = JSON.parse(await answer.body) as { data: { ownedNumbers: { tid: string }[] } };
    // A live stream polls the simulator until the drain ends it.
    const query = `subscription { messageAdded(tids: ["${data.ownedNumbers[0]!.tid}"]) { body } }`;
    const stream = await post(port, query, 'text/event-stream');
    expect(stream.status).toBe(200);

    expect(await runtime.drain('SIGINT')).toBe(0);
    await stream.body;
    // Destroy hooks run a turn after a timer is cleared: wait for them, then name what is left.
    await until(() => timers.size === 0, 1_000).catch(() => undefined);
    expect([...timers.values()]).toEqual([]);
  });
});
