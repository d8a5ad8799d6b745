/**
 * One account, one pseudonymous id across the fleet: copies sharing GATEWAY_SECRET log the same
 * account id for the same sys_id, and so does a copy started again; without the key each
 * process has its own. CACHE_HMAC_KEY, its former name, names accounts alike. Real processes (dist/main.js) over one scripted service that answers 429
 * for the account, so each copy logs a refusal line naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../../support/scripted-upstream.js';
import { until } from '../../support/wait.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';

const KEY = 'fleet-key-0123456789abcdef0123456789';
const AUTH = { 'x-sys-id': 'AC-fleet', 'x-auth-token': 'tok-fleet' };

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream(() => ({
    status: 429,
    text: '',
    headers: { 'retry-after': '60' },
  }));
});
afterAll(() => upstream.close());

/** Starts a copy, meets the 429 then a refusal inside its window, and returns the id it logged. */
async function accountIdLoggedBy(env: Record<string, string>): Promise<string> {
  const copy: GatewayProcess = await startGatewayProcess({
    UPSTREAM_URL: upstream.url,
    LOG_LEVEL: 'info',
    LIVE_POLL_MS: '0',
    ...env,
  });
  try {
    for (let i = 0; i < 2; i += 1) {
      await fetch(copy.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...AUTH },
        body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
      });
    }
    const refusal = (): Record<string, unknown> | undefined =>
      copy
        .logs()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.code === 'RATE_LIMITED' && typeof line.account === 'string');
    await until(() => refusal() !== undefined, 5_000);
    expect(copy.logs()).not.toContain('tok-fleet');
    return refusal()?.account as string;
  } finally {
    await copy.close();
  }
}

describe('the account id in logs', () => {
  it('is the same on every copy sharing GATEWAY_SECRET (or its alias) and after a restart; per process without it', async () => {
    const first = await accountIdLoggedBy({ GATEWAY_SECRET: KEY });
    const second = await accountIdLoggedBy({ CACHE_HMAC_KEY: KEY });
    const restarted = await accountIdLoggedBy({ GATEWAY_SECRET: KEY });
    expect(first).toMatch(/^[\w-]{22}$/);
    expect(second).toBe(first);
    expect(restarted).toBe(first);
    expect(first).not.toContain('AC-fleet');

    const otherKey = await accountIdLoggedBy({ GATEWAY_SECRET: `${KEY}-other` });
    const noKeyOne = await accountIdLoggedBy({});
    const noKeyTwo = await accountIdLoggedBy({});
    expect(otherKey).not.toBe(first);
    expect(noKeyOne).not.toBe(first);
    expect(noKeyTwo).not.toBe(noKeyOne);
  });
});
