/** METRICS_PORT's server: GET or HEAD /metrics in the exposition format; anything else 404. */
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsServer } from '../../src/observability/metrics-server.js';

const registry = new Registry();
new Counter({ name: 'probe_total', help: 'a series to find', registers: [registry] }).inc(3);
const server = createMetricsServer(registry);
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('createMetricsServer', () => {
  it("serves the registry's series on GET /metrics, a query string allowed, and headers alone on HEAD", async () => {
    const got = await request(`${base}/metrics?from=prometheus`);
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe(registry.contentType);
    expect(await got.body.text()).toContain('probe_total 3');
    const head = await request(`${base}/metrics`, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(await head.body.text()).toBe('');
  });

  it('answers 404 to any other path or method: the port serves metrics alone', async () => {
    for (const [path, method] of [
      ['/graphql', 'GET'],
      ['/metrics', 'POST'],
      ['/', 'GET'],
    ] as const) {
      const response = await request(`${base}${path}`, { method });
      expect(response.statusCode, `${method} ${path}`).toBe(404);
      await response.body.dump();
    }
  });
});
