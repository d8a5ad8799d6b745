/**
 * GRAPHIQL: with NODE_ENV=production, GraphiQL and schema introspection are off unless
 * GRAPHIQL=on turns them back on (Apollo Server's convention); elsewhere they are on unless
 * GRAPHIQL=off. The federation `_service { sdl }` a router composes from and `__typename` are
 * not introspection and are answered either way. The app is assembled from the configuration as
 * in production (src/app.ts), over the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { GRAPHIQL_ASSETS_PATH } from '../../src/http/graphiql.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { executeText } from '../fixtures/harness.js';

const SECRET = 'graphiql-production-secret-0123456789';
const INTROSPECTION = '{ __schema { queryType { name } } }';

let simulator: RunningSimulator;
const apps: App[] = [];
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await simulator.close();
});

function gatewayWith(env: Record<string, string>): App['gateway'] {
  const config = loadConfig({ UPSTREAM_URL: simulator.url, GATEWAY_SECRET: SECRET, ...env });
  const app = assembleApp(config, { logger: false, metrics: null });
  apps.push(app);
  return app.gateway;
}

const page = (gateway: App['gateway']) =>
  gateway.fetch('http://gateway.test/graphql', { headers: { accept: 'text/html' } });

describe('NODE_ENV=production', () => {
  it('serves neither GraphiQL nor introspection by default', async () => {
    const gateway = gatewayWith({ NODE_ENV: 'production' });
    const response = await page(gateway);
    expect(await response.text()).not.toContain('NumbersWithLatestMessages');
    expect(
      (await gateway.fetch(`http://gateway.test${GRAPHIQL_ASSETS_PATH}favicon.ico`)).status,
    ).not.toBe(200);
    const { body } = await executeText(gateway, INTROSPECTION);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toMatch(/introspection/i);
    const type = await executeText(gateway, '{ __type(name: "Number") { name } }');
    expect(type.body.errors?.[0]?.message).toMatch(/introspection/i);
  });

  it('still answers the router its _service SDL, and __typename', async () => {
    const gateway = gatewayWith({ NODE_ENV: 'production' });
    const { body } = await executeText<{ _service: { sdl: string }; __typename: string }>(
      gateway,
      '{ __typename _service { sdl } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.__typename).toBe('Query');
    expect(body.data?._service.sdl).toContain('type Number');
  });

  it('serves both with GRAPHIQL=on', async () => {
    const gateway = gatewayWith({ NODE_ENV: 'production', GRAPHIQL: 'on' });
    expect(await (await page(gateway)).text()).toContain('NumbersWithLatestMessages');
    const { body } = await executeText(gateway, INTROSPECTION);
    expect(body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('without NODE_ENV', () => {
  it('serves both by default, and neither with GRAPHIQL=off', async () => {
    const open = gatewayWith({});
    expect(await (await page(open)).text()).toContain('NumbersWithLatestMessages');
    expect((await executeText(open, INTROSPECTION)).body.errors).toBeUndefined();
    const closed = gatewayWith({ GRAPHIQL: 'off' });
    expect(await (await page(closed)).text()).not.toContain('NumbersWithLatestMessages');
    expect((await executeText(closed, INTROSPECTION)).body.errors?.[0]?.message).toMatch(
      /introspection/i,
    );
  });
});
