/**
 * A copy that crashes (kill -9) under load, behind the documented haproxy recipe
 * (docs/recipes/haproxy.cfg): its requests in flight are retried on the other copy (`retry-on
 * all-retryable-errors`, `option redispatch`), so clients see no failed request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_CREDENTIALS,
  startSimulator,
  type RunningSimulator,
} from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { startHaproxy, type RunningHaproxy } from '../fixtures/haproxy.js';
import { until } from '../../support/wait.js';

const CLIENTS = 8;
const AUTHORIZATION = `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`;
const BODY = JSON.stringify({ query: '{ ownedNumbers { tid } }' });

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

const requestLines = (gateway: GatewayProcess): number =>
  gateway
    .logs()
    .split('\n')
    .filter((line) => line.includes('"msg":"request"')).length;

describe('a copy killed with SIGKILL behind the haproxy recipe, under load', () => {
  it('fails no request: the balancer retries them on the other copy', async () => {
    const tally = { ok: 0, failures: [] as string[] };
    let go = true;
    const client = async (): Promise<void> => {
      while (go) {
        try {
          const response = await fetch(`${balancer.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: AUTHORIZATION },
            body: BODY,
          });
          const text = await response.text();
          if (response.status === 200 && text.includes('"data"') && !text.includes('"errors"')) {
            tally.ok += 1;
          } else tally.failures.push(`HTTP ${response.status} ${text.slice(0, 200)}`);
        } catch (error) {
          tally.failures.push(String((error as Error).cause ?? error));
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
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
