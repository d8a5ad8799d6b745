/**
 * `npm start` with the response cache in a real redis-server: a Redis URL without the HMAC key is
 * refused at start-up, and the built process caches in Redis and quits its connections on SIGTERM.
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { spawnGateway } from '../../support/gateway-process.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { basicAuth } from '../fixtures/harness.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';

const HMAC_KEY = 'test-hmac-key-0123456789abcdef-0123456789';

let redis: RunningRedis;
let admin: Redis;
let gateway: GatewayProcess | undefined;
beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  await gateway?.close();
  await admin?.quit();
  await redis?.close();
});

describe('npm start with the response cache', () => {
  it('refuses REDIS_URL without GATEWAY_SECRET, saying why and without echoing the URL', async () => {
    const child = spawnGateway({
      env: {
        UPSTREAM_URL: '',
        CACHE_TTL_MS: '1000',
        REDIS_URL: `redis://:pw-S3CRET@127.0.0.1:${redis.port}`,
      },
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.resume();
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(1);
    expect(stderr).toContain('GATEWAY_SECRET is required with REDIS_URL');
    expect(stderr).not.toContain('pw-S3CRET');
  });

  it('caches in Redis and closes the connection on SIGTERM', async () => {
    const clients = async () => ((await admin.client('LIST')) as string).trim().split('\n').length;
    const beforeStart = await clients();
    gateway = await startGatewayProcess({
      CACHE_TTL_MS: '60000',
      REDIS_URL: redis.url,
      CACHE_HMAC_KEY: HMAC_KEY,
    });
    const started = gateway;
    // The banner and the cache line after it are for people, on stderr.
    await expect
      .poll(() => started.stderr())
      .toContain(`Response cache: on, in Redis at 127.0.0.1:${redis.port}, answers kept 60000 ms`);
    const ask = async () => {
      const response = await fetch(started.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
        body: JSON.stringify({ query: '{ ownedNumbers { tid } }' }),
      });
      return (await response.json()) as unknown;
    };
    const first = await ask();
    expect(first).toEqual({
      data: { ownedNumbers: DEMO_ACCOUNT.numbers.map((n) => ({ tid: n.tid })) },
    });
    expect(await admin.dbsize()).toBe(1);
    expect(await ask()).toEqual(first);

    // The response cache, the APQ store and live updates (commands and pub/sub) each connect.
    expect(await clients()).toBeGreaterThan(beforeStart);
    const exited = once(started.child, 'exit') as Promise<[number | null]>;
    started.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(await clients()).toBe(beforeStart);
  });
});
