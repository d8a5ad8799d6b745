/**
 * METRICS_PORT on the real process: /metrics is served on its own port and no longer on the
 * public one, which keeps serving GraphQL. Without it, /metrics stays beside /graphql, except
 * with NODE_ENV=production, where it moves to port 9464 by default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRODUCTION_METRICS_PORT } from '../../src/config/config.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { freePort } from '../fixtures/redis.js';

describe('METRICS_PORT set', () => {
  let gateway: GatewayProcess;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    gateway = await startGatewayProcess({ METRICS_PORT: String(metricsPort) });
  });
  afterAll(() => gateway.close());

  it('serves /metrics on the metrics port', async () => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('sms_upstream_requests_total');
  });

  it('counts the public port’s GraphQL requests there', async () => {
    await fetch(gateway.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query Probe { __typename }' }),
    });
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(text).toMatch(/graphql_envelop_request\{[^}]*operationName="Probe"[^}]*\} 1/);
  });

  it('serves nothing else on the metrics port', async () => {
    expect((await fetch(`http://127.0.0.1:${metricsPort}/graphql`)).status).toBe(404);
  });

  it('no longer serves /metrics on the public port', async () => {
    const publicBase = gateway.endpoint.replace(/\/graphql$/, '');
    const response = await fetch(`${publicBase}/metrics`);
    expect(response.status).toBe(404);
    expect((await fetch(`${publicBase}/health`)).status).toBe(200);
  });
});

describe('METRICS_PORT unset (the default)', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess();
  });
  afterAll(() => gateway.close());

  it('serves /metrics on the public port', async () => {
    const response = await fetch(`${gateway.endpoint.replace(/\/graphql$/, '')}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('sms_upstream_requests_total');
  });
});

describe('NODE_ENV=production with METRICS_PORT unset', () => {
  let simulator: RunningSimulator;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    // Production is given a real UPSTREAM_URL, as an operator would: here the simulator's.
    simulator = await startSimulator();
    gateway = await startGatewayProcess({
      NODE_ENV: 'production',
      UPSTREAM_URL: simulator.url,
      GATEWAY_SECRET: 'metrics-port-secret-0123456789abcdef',
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await simulator?.close();
  });

  it('serves /metrics on port 9464 and not on the public port', async () => {
    await expect
      .poll(() => gateway.stderr())
      .toContain(`:${DEFAULT_PRODUCTION_METRICS_PORT}/metrics`);
    const scraped = await fetch(`http://127.0.0.1:${DEFAULT_PRODUCTION_METRICS_PORT}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('sms_graphql_requests_total');
    const publicBase = gateway.endpoint.replace(/\/graphql$/, '');
    expect((await fetch(`${publicBase}/metrics`)).status).toBe(404);
  });
});
