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
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { Redis } from 'ioredis';
import { connectRedis, reconnectOnReadOnly } from '../../src/redis/connection.js';
import { freePort, startRedis, type RunningRedis } from '../fixtures/redis.js';
import { until } from '../../support/wait.js';

const PASSWORD = 'sentinel-test-pw';
/** The second sentinel's own password (requirepass), unlike the first, which has none. */
const SENTINEL_PASSWORD = 'sentinel-own-pw';
let primary: RunningRedis;
const sentinels: ChildProcess[] = [];
let sentinelPort: number;
let lockedSentinelPort: number;
let dir: string;

async function startSentinel(port: number, extra: string[]): Promise<void> {
  const config = join(dir, `sentinel-${port}.conf`);
  await writeFile(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor gateway-primary 127.0.0.1 ${primary.port} 1`,
      `sentinel auth-pass gateway-primary ${PASSWORD}`,
      ...extra,
      '',
    ].join('\n'),
  );
  const sentinel = spawn('redis-server', [config, '--sentinel'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  sentinels.push(sentinel);
  let output = '';
  sentinel.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(() => /\+monitor master gateway-primary/.test(output), 10_000);
  sentinel.stdout?.resume();
  sentinel.stderr?.resume();
}

beforeAll(async () => {
  primary = await startRedis({ password: PASSWORD });
  dir = await mkdtemp(join(tmpdir(), 'gateway-sentinel-'));
  sentinelPort = await freePort();
  await startSentinel(sentinelPort, []);
  lockedSentinelPort = await freePort();
  await startSentinel(lockedSentinelPort, [`requirepass ${SENTINEL_PASSWORD}`]);
});

afterAll(async () => {
  for (const sentinel of sentinels) {
    if (sentinel.pid === undefined || sentinel.exitCode !== null) continue;
    const exited = once(sentinel, 'exit');
    process.kill(sentinel.pid, 'SIGTERM');
    await exited;
  }
  await primary?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** ioredis' console warnings while `run` runs (a password sent where none is asked for). */
async function warningsDuring(run: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const spy = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    warnings.push(args.map(String).join(' '));
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return warnings;
}

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

  it("sends the sentinels no password of the primary's: none is asked for, none is warned about", async () => {
    const config = loadConfig({
      REDIS_URL: `redis://:${PASSWORD}@ignored-host:6379`,
      REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
      REDIS_SENTINEL_NAME: 'gateway-primary',
      CACHE_HMAC_KEY: 'sentinel-test-key-0123456789abcdef0123',
    });
    const connection = connectRedis(config.redis!, 'cache', { logger: false });
    // The failover detector's own connections to the sentinels would carry a password too:
    // ioredis emits this once they have connected (and authenticated, if they do) and subscribed.
    const detectorSubscribed = once(connection.client, 'failoverSubscribed', {
      signal: AbortSignal.timeout(10_000),
    });
    detectorSubscribed.catch(() => undefined); // awaited below, unless ready() failed first
    const warnings = await warningsDuring(async () => {
      try {
        expect(await connection.ready(10_000)).toBe(true);
        await connection.client.set('sms-gateway:sentinel-test', 'quiet');
        await detectorSubscribed;
      } finally {
        await connection.close();
      }
    });
    expect((connection.client as Redis).options.sentinelPassword).toBeFalsy();
    expect(warnings.filter((w) => /password/i.test(w))).toEqual([]);
  });

  it('asks sentinels that have a password of their own with REDIS_SENTINEL_PASSWORD', async () => {
    const config = loadConfig({
      REDIS_URL: `redis://:${PASSWORD}@ignored-host:6379`,
      REDIS_SENTINELS: `127.0.0.1:${lockedSentinelPort}`,
      REDIS_SENTINEL_NAME: 'gateway-primary',
      REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
      CACHE_HMAC_KEY: 'sentinel-test-key-0123456789abcdef0123',
    });
    const connection = connectRedis(config.redis!, 'cache', { logger: false });
    try {
      expect(await connection.ready(10_000)).toBe(true);
      await connection.client.set('sms-gateway:sentinel-test', 'through the locked sentinel');
      expect(await connection.client.get('sms-gateway:sentinel-test')).toBe(
        'through the locked sentinel',
      );
    } finally {
      await connection.close();
    }
  });
});
