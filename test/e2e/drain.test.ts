/**
 * A drain under load, as in a fleet: two real gateway processes (dist/main.js) behind a real
 * load balancer (Debian's haproxy, health-checking /readiness, reusing keep-alive connections),
 * clients sending POSTs through it without pause. SIGTERM to one copy: it answers 503 on
 * /readiness while still serving, the balancer takes it out, it stops accepting, finishes what
 * it has and exits 0; the clients see no failed request.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_AUTHORIZATION,
  loadBothCopies,
  twoCopiesBehindHaproxy,
  type TwoCopies,
} from '../fixtures/fleet-load.js';
import { until, untilAsync } from '../../support/wait.js';

const READINESS_DELAY_MS = 1_500;
const CLIENTS = 8;
const BODY = JSON.stringify({ query: '{ ownedNumbers { tid } }' });

let fleet: TwoCopies;

beforeAll(async () => {
  fleet = await twoCopiesBehindHaproxy({
    SHUTDOWN_READINESS_DELAY_MS: String(READINESS_DELAY_MS),
  });
}, 30_000);

afterAll(() => fleet?.close());

describe('draining one copy of two behind haproxy, under load', () => {
  it('fails no request; the copy says 503 on /readiness while serving, then exits 0', async () => {
    // Both copies take their share before the drain.
    const load = await loadBothCopies(fleet, CLIENTS);
    const { tally } = load;

    const exited = once(fleet.leaving.child, 'exit') as Promise<[number | null, string | null]>;
    fleet.leaving.child.kill('SIGTERM');
    // Draining, still serving: readiness turns 503 with its reason, a query still answers.
    let readiness: Response | undefined;
    await untilAsync(async () => {
      readiness = await fetch(`${fleet.leaving.url}/readiness`);
      if (readiness.status === 503) return true;
      await readiness.body?.cancel();
      return false;
    }, 5_000);
    expect(await readiness!.json()).toMatchObject({ ready: false, status: 'draining' });
    const direct = await fetch(fleet.leaving.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: DEMO_AUTHORIZATION },
      body: BODY,
    });
    expect(direct.status).toBe(200);
    // ... and tells the client to open its next connection elsewhere.
    expect(direct.headers.get('connection')).toBe('close');

    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    // The clients go on through haproxy to the other copy.
    const servedAfterExit = tally.ok;
    await until(() => tally.ok > servedAfterExit + 10, 10_000);
    await load.stop();

    expect(tally.failures, fleet.balancer.output()).toEqual([]);
    expect(tally.ok).toBeGreaterThan(servedAfterExit);
    // Its own log says it drained in order.
    const messages = fleet.leaving
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
