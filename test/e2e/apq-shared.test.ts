/**
 * With REDIS_URL, APQ hashes live in Redis: a query registered through one gateway copy runs
 * by its hash alone through another. Two real processes (dist/main.js), one real redis-server.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APQ_KEY_PREFIX } from '../../src/cache/apq-store.js';
import { DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';

const QUERY = 'query SharedHash { ownedNumbers { tid } }';
// Copies sharing a Redis need the same key (live updates share their topics there too).
const HMAC_KEY = 'apq-shared-test-key-0123456789abcdef0123';
const HASH = createHash('sha256').update(QUERY).digest('hex');
const AUTHORIZATION = `Basic ${Buffer.from(`${DEMO_CREDENTIALS.sysId}:${DEMO_CREDENTIALS.authToken}`).toString('base64')}`;

let redis: RunningRedis;
let first: GatewayProcess;
let second: GatewayProcess;

beforeAll(async () => {
  redis = await startRedis();
  [first, second] = await Promise.all([
    startGatewayProcess({ REDIS_URL: redis.url, CACHE_HMAC_KEY: HMAC_KEY }),
    startGatewayProcess({ REDIS_URL: redis.url, CACHE_HMAC_KEY: HMAC_KEY }),
  ]);
});

afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await redis?.close();
});

async function post(gateway: GatewayProcess, body: object) {
  const response = await fetch(gateway.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTHORIZATION },
    body: JSON.stringify(body),
  });
  return (await response.json()) as {
    data?: { ownedNumbers: { tid: string }[] };
    errors?: { message: string }[];
  };
}

const persisted = { persistedQuery: { version: 1, sha256Hash: HASH } };

describe('APQ across gateway copies sharing Redis', () => {
  it('a hash registered through one copy runs through the other', async () => {
    // Neither copy knows the hash yet.
    expect((await post(second, { extensions: persisted })).errors?.[0]?.message).toBe(
      'PersistedQueryNotFound',
    );
    const registered = await post(first, { query: QUERY, extensions: persisted });
    expect(registered.errors).toBeUndefined();

    const byHash = await post(second, { extensions: persisted });
    expect(byHash.errors).toBeUndefined();
    expect(byHash.data).toEqual(registered.data);
    expect(byHash.data?.ownedNumbers.length).toBeGreaterThan(0);
  });

  it('stores the query, sealed (src/cache/apq-store.ts), under a prefixed key that expires', async () => {
    const admin = new Redis(redis.url);
    try {
      const stored = await admin.getBuffer(`${APQ_KEY_PREFIX}${HASH}`);
      expect(stored?.length).toBeGreaterThan(QUERY.length);
      expect(stored?.toString('latin1')).not.toContain('SharedHash');
      expect(await admin.ttl(`${APQ_KEY_PREFIX}${HASH}`)).toBeGreaterThan(0);
    } finally {
      admin.disconnect();
    }
  });
});
