/**
 * The haproxy recipe (docs/recipes/haproxy.cfg) as operators get it: haproxy's own check passes,
 * and run in front of the built gateway it logs each request on stdout (httplog: the copy that
 * answered, its status, the retries), so what the balancer did can be read beside the copies'
 * request lines. test/e2e/drain.test.ts and crash.test.ts run the same file for what it routes.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { startHaproxy, type RunningHaproxy } from '../fixtures/haproxy.js';

const RECIPE = fileURLToPath(new URL('../../docs/recipes/haproxy.cfg', import.meta.url));

let gateway: GatewayProcess;
let haproxy: RunningHaproxy;
beforeAll(async () => {
  gateway = await startGatewayProcess();
  haproxy = await startHaproxy({ backends: [new URL(gateway.url).host] });
});
afterAll(async () => {
  await haproxy?.close();
  await gateway?.close();
});

describe('docs/recipes/haproxy.cfg', () => {
  it("passes haproxy's configuration check as written", async () => {
    const { stdout, stderr } = await promisify(execFile)('haproxy', ['-c', '-f', RECIPE]);
    expect(`${stdout}${stderr}`).toMatch(/Configuration file is valid/);
  });

  it('logs a line per request on stdout: the copy, the status, the path', async () => {
    const marker = `/graphql?logged=${Date.now()}`;
    const response = await fetch(`${haproxy.url}${marker}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(200);
    await expect
      .poll(
        () =>
          haproxy
            .output()
            .split('\n')
            .find((line) => line.includes(marker)),
        {
          timeout: 5_000,
        },
      )
      .toMatch(
        new RegExp(
          `public gateways/copy0 \\S+ 200 .*"POST ${marker.replace('?', '\\?')} HTTP/1\\.1"`,
        ),
      );
  });
});
