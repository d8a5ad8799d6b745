/**
 * Redis behind Sentinel, configured as an operator would (REDIS_SENTINELS, REDIS_SENTINEL_NAME,
 * the primary's password in REDIS_URL): a real redis-server primary and a real sentinel
 * (Debian's redis-server in sentinel mode) on 127.0.0.1; the gateway finds the primary through
 * the sentinel and uses it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { Redis } from 'ioredis';
import { connectRedis, reconnectOnReadOnly } from '../../src/redis/connection.js';
import { freePort, startRedis, type RunningRedis } from '../fixtures/redis.js';
import { until } from '../../support/wait.js';

const PASSWORD = 'sentinel-test-pw';
let primary: RunningRedis;
let sentinel: ChildProcess;
let sentinelPort: number;
let dir: string;

beforeAll(async () => {
  primary = await startRedis({ password: PASSWORD });
  sentinelPort = await freePort();
  dir = await mkdtemp(join(tmpdir(), 'gateway-sentinel-'));
  const config = join(dir, 'sentinel.conf');
  await writeFile(
    config,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor gateway-primary 127.0.0.1 ${primary.port} 1`,
      `sentinel auth-pass gateway-primary ${PASSWORD}`,
      '',
    ].join('\n'),
  );
  sentinel = spawn('redis-server', [config, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  sentinel.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(() => /\+monitor master gateway-primary/.test(output), 10_000);
  sentinel.stdout?.resume();
  sentinel.stderr?.resume();
});

afterAll(async () => {
  if (sentinel?.pid !== undefined && sentinel.exitCode === null) {
    const exited = once(sentinel, 'exit');
    process.kill(sentinel.pid, 'SIGTERM');
    await exited;
  }
  await primary?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('reconnectOnReadOnly', () => {
  it('reconnects (and fails the command at once) when a write meets a replica, and only then', () => {
    expect(
      reconnectOnReadOnly(new Error("READONLY You can't write against a read only replica.")),
    ).toBe(2);
    expect(reconnectOnReadOnly(new Error('ERR wrong number of arguments'))).toBe(false);
    expect(reconnectOnReadOnly(new Error('LOADING Redis is loading the dataset'))).toBe(false);
  });
});

describe('Redis through Sentinel', () => {
  it('finds the primary through the sentinel and runs commands on it', async () => {
    const config = loadConfig({
      // The host is not used with sentinels: only the password (and TLS, database) are.
      REDIS_URL: `redis://:${PASSWORD}@ignored-host:6379`,
      REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
      REDIS_SENTINEL_NAME: 'gateway-primary',
      CACHE_HMAC_KEY: 'sentinel-test-key-0123456789abcdef0123',
    });
    if (!config.redis) throw new Error('expected Redis settings');
    const connection = connectRedis(config.redis, 'cache', { logger: false });
    try {
      expect(connection.topology).toBe('sentinel');
      // Follows a failover (test/e2e/sentinel-failover.test.ts runs one): +switch-master, only
      // a node that says it is the primary, and a reconnect when a write meets a replica.
      expect((connection.client as Redis).options).toMatchObject({
        failoverDetector: true,
        role: 'master',
        reconnectOnError: reconnectOnReadOnly,
      });
      expect(await connection.ready(10_000)).toBe(true);
      expect(connection.up).toBe(true);
      await connection.client.set('sms-gateway:sentinel-test', 'through the sentinel');
      const direct = connectRedis(
        new URL(`redis://:${PASSWORD}@127.0.0.1:${primary.port}`),
        'cache',
        {
          logger: false,
        },
      );
      try {
        expect(await direct.ready(5_000)).toBe(true);
        expect(await direct.client.get('sms-gateway:sentinel-test')).toBe('through the sentinel');
      } finally {
        await direct.close();
      }
    } finally {
      await connection.close();
    }
    expect(connection.up).toBe(false);
  });
});
