/**
 * METRICS_PORT on the real process: /metrics is served on its own port and no longer on the
 * public one, which keeps serving GraphQL. Without it, /metrics stays beside /graphql, except
 * with NODE_ENV=production, where it moves to port 9464 by default. METRICS_HOST chooses the
 * metrics port's interface apart from HOST's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRODUCTION_METRICS_PORT } from '../../src/config/config.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { freePort } from '../fixtures/redis.js';

/** This machine's first address that is not loopback, if it has one (to prove a bind to it). */
const OTHER_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
const SS = ['/usr/bin/ss', '/bin/ss', '/usr/sbin/ss', '/sbin/ss'].find((path) => existsSync(path));

/** Whether something accepts a TCP connection at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/** The local addresses the process `pid` listens on at `port`, as `ss -ltnp` shows them. */
function listeningAddresses(ss: string, pid: number, port: number): string[] {
  return execFileSync(ss, ['-Hltnp'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => line.trim().split(/\s+/)[3] ?? '')
    .filter((local) => local.endsWith(`:${port}`));
}

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

  it.runIf(SS !== undefined)('listens where HOST does (127.0.0.1) without METRICS_HOST', () => {
    expect(listeningAddresses(SS as string, gateway.pid, metricsPort)).toEqual([
      `127.0.0.1:${metricsPort}`,
    ]);
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

describe('METRICS_HOST=127.0.0.1 while HOST=0.0.0.0', () => {
  let gateway: GatewayProcess;
  let metricsPort: number;
  let publicPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    gateway = await startGatewayProcess({
      HOST: '0.0.0.0',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    publicPort = Number(new URL(gateway.endpoint).port);
  });
  afterAll(() => gateway.close());

  it('scrapes answer on 127.0.0.1, and the start-up lines say where', async () => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('sms_upstream_requests_total');
    await expect
      .poll(() => gateway.stderr())
      .toContain(`Metrics: http://127.0.0.1:${metricsPort}/metrics\n`);
  });

  it.runIf(OTHER_ADDRESS !== undefined)(
    `the metrics port does not answer on another address of this machine (${OTHER_ADDRESS}), where the public port does`,
    async () => {
      const other = OTHER_ADDRESS as string;
      expect(await accepts(other, publicPort)).toBe(true);
      expect(await accepts(other, metricsPort)).toBe(false);
      expect(await accepts('127.0.0.1', metricsPort)).toBe(true);
    },
  );

  it.runIf(SS !== undefined)('the process listens for metrics on 127.0.0.1 alone (ss)', () => {
    expect(listeningAddresses(SS as string, gateway.pid, metricsPort)).toEqual([
      `127.0.0.1:${metricsPort}`,
    ]);
    expect(listeningAddresses(SS as string, gateway.pid, publicPort)).toEqual([
      `0.0.0.0:${publicPort}`,
    ]);
  });
});
