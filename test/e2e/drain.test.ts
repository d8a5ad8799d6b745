/**
 * A drain under load, as in a fleet: two real gateway processes (dist/main.js) behind a real
 * load balancer (Debian's haproxy, health-checking /readiness, reusing keep-alive connections),
 * clients sending POSTs through it without pause. SIGTERM to one copy: it answers 503 on
 * /readiness while still serving, the balancer takes it out, it stops accepting, finishes what
 * it has and exits 0; the clients see no failed request.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { DEMO_AUTHORIZATION, keepPosting, newTally, requestLines } from '../fixtures/fleet-load.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { startHaproxy, type RunningHaproxy } from '../fixtures/haproxy.js';
import { sleep, until } from '../../support/wait.js';

const READINESS_DELAY_MS = 1_500;
const CLIENTS = 8;
const BODY = JSON.stringify({ query: '{ ownedNumbers { tid } }' });

let simulator: RunningSimulator;
let draining: GatewayProcess;
let staying: GatewayProcess;
let balancer: RunningHaproxy;

const origin = (gateway: GatewayProcess): string => new URL(gateway.endpoint).origin;
const hostPort = (gateway: GatewayProcess): string => new URL(gateway.endpoint).host;

beforeAll(async () => {
  // Each upstream call takes 20 ms: requests are always in flight when the drain begins.
  simulator = await startSimulator({ latencyMs: 20 });
  const env = {
    UPSTREAM_URL: simulator.url,
    SHUTDOWN_READINESS_DELAY_MS: String(READINESS_DELAY_MS),
    LOG_LEVEL: 'info',
  };
  [draining, staying] = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
  balancer = await startHaproxy({ backends: [hostPort(draining), hostPort(staying)] });
}, 30_000);

afterAll(async () => {
  await balancer?.close();
  await Promise.all([draining?.close(), staying?.close()]);
  await simulator?.close();
});

describe('draining one copy of two behind haproxy, under load', () => {
  it('fails no request; the copy says 503 on /readiness while serving, then exits 0', async () => {
    const tally = newTally();
    let go = true;
    const clients = Array.from({ length: CLIENTS }, () =>
      keepPosting(`${balancer.url}/graphql`, tally, () => go),
    );
    // Both copies take their share before the drain.
    await until(() => requestLines(draining) > 20 && requestLines(staying) > 20, 30_000);

    const exited = once(draining.child, 'exit') as Promise<[number | null, string | null]>;
    draining.child.kill('SIGTERM');
    await sleep(200);
    // Draining, still serving: readiness is 503 with its reason, a query still answers.
    const readiness = await fetch(`${origin(draining)}/readiness`);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({ ready: false, status: 'draining' });
    const direct = await fetch(draining.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: DEMO_AUTHORIZATION },
      body: BODY,
    });
    expect(direct.status).toBe(200);
    // ... and tells the client to open its next connection elsewhere.
    expect(direct.headers.get('connection')).toBe('close');

    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const servedAfterExit = tally.ok;
    await sleep(500);
    go = false;
    await Promise.all(clients);

    expect(tally.failures, balancer.output()).toEqual([]);
    expect(tally.ok).toBeGreaterThan(servedAfterExit);
    // Its own log says it drained in order.
    const messages = draining
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    const order = [
      'draining: /readiness now 503',
      'draining: no longer accepting connections',
      'stopped',
    ];
    expect(messages.filter((message) => order.includes(message))).toEqual(order);
  }, 90_000);
});
