/**
 * A copy that crashes (kill -9) under load, behind the documented haproxy recipe
 * (docs/recipes/haproxy.cfg): its requests in flight are retried on the other copy (`retry-on
 * all-retryable-errors`, `option redispatch`), so clients see no failed request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { keepPosting, newTally, requestLines } from '../fixtures/fleet-load.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { startHaproxy, type RunningHaproxy } from '../fixtures/haproxy.js';
import { until } from '../../support/wait.js';

const CLIENTS = 8;

let simulator: RunningSimulator;
let crashing: GatewayProcess;
let staying: GatewayProcess;
let balancer: RunningHaproxy;

const hostPort = (gateway: GatewayProcess): string => new URL(gateway.endpoint).host;

beforeAll(async () => {
  // Each upstream call takes 20 ms: requests are in flight on the copy when it dies.
  simulator = await startSimulator({ latencyMs: 20 });
  const env = { UPSTREAM_URL: simulator.url, LOG_LEVEL: 'info' };
  [crashing, staying] = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
  balancer = await startHaproxy({ backends: [hostPort(crashing), hostPort(staying)] });
}, 30_000);

afterAll(async () => {
  await balancer?.close();
  await Promise.all([crashing?.close(), staying?.close()]);
  await simulator?.close();
});

describe('a copy killed with SIGKILL behind the haproxy recipe, under load', () => {
  it('fails no request: the balancer retries them on the other copy', async () => {
    const tally = newTally();
    let go = true;
    const clients = Array.from({ length: CLIENTS }, () =>
      keepPosting(`${balancer.url}/graphql`, tally, () => go),
    );
    await until(() => requestLines(crashing) > 20 && requestLines(staying) > 20, 30_000);

    crashing.child.kill('SIGKILL');
    const servedAtCrash = tally.ok;
    // Long enough for the balancer to notice and for the survivor to carry everything.
    await until(() => tally.ok > servedAtCrash + 200, 30_000);
    go = false;
    await Promise.all(clients);

    expect(tally.failures, balancer.output()).toEqual([]);
  }, 90_000);
});
