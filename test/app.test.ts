/**
 * src/app.ts: assembleApp wires the parts it is given and starts nothing: its upstream is
 * UPSTREAM_URL or the simulator it is handed, one memory of credential verdicts serves the
 * traffic layer, and close() is one promise however often it is asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { credentialMemory } from '../src/traffic/verification.js';
import { DEMO_CREDENTIALS, startSimulator, type RunningSimulator } from '../src/simulator/index.js';
import { basicAuth, execute } from './fixtures/harness.js';
import { OwnedNumbersQuery } from './fixtures/operations.js';

let simulator: RunningSimulator;
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(async () => {
  await simulator.close();
});

describe('assembleApp', () => {
  it('refuses a Config with no upstream when no simulator is handed to it', () => {
    expect(() => assembleApp(loadConfig({}))).toThrow('no UPSTREAM_URL and no simulator');
  });

  it('uses the simulator it is handed as the upstream, and answers without listening', async () => {
    const app = assembleApp(loadConfig({}), { simulator: { ...simulator, close: async () => {} } });
    expect(app.upstreamUrl.href).toBe(new URL(simulator.url).href);
    expect(app.server.listening).toBe(false);
    const { body } = await execute(app.gateway, OwnedNumbersQuery, {}, basicAuth(DEMO_CREDENTIALS));
    expect(body.errors).toBeUndefined();
    expect(body.data?.ownedNumbers?.length).toBeGreaterThan(0);
    await app.close();
  });

  it('hands the traffic layer the credential memory it is given, which then holds the verdict', async () => {
    const config = loadConfig({ UPSTREAM_URL: simulator.url });
    const credentials = credentialMemory(config);
    const app = assembleApp(config, { credentials });
    expect(app.client.credentials).toBe(credentials);
    await execute(app.gateway, OwnedNumbersQuery, {}, basicAuth(DEMO_CREDENTIALS));
    const { sysId, authToken } = DEMO_CREDENTIALS;
    expect(credentials.verdictOf(credentials.identities.of({ sysId, authToken }).pair)).toBe(
      'accepted',
    );
    const closing = app.close();
    expect(app.close()).toBe(closing);
    await closing;
  });
});
