/**
 * The Redis answer store against a real redis-server on 127.0.0.1: an answer comes back as it
 * was kept, sealed in Redis and expiring after `keepMs`; a value that does not open (another
 * secret, another key, no header) is a miss, logged once; and Redis gone costs a miss, never a
 * rejection.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAnswerStore } from '../../src/cache/redis-store.js';
import { connectRedis } from '../../src/redis/connection.js';
import type { RedisConnection } from '../../src/redis/connection.js';
import type { StoredAnswer } from '../../src/cache/store.js';
import { createSeal } from '../../src/redis/seal.js';
import { captureLogs } from '../fixtures/captured-logs.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';

const SECRET = 'redis-store-test-secret-0123456789abcdef';
const seal = createSeal({ current: SECRET });
const json = JSON.stringify({ data: { number: { tid: 'TID-STORE-1', body: 'hello there' } } });
const answer: StoredAnswer = {
  json,
  bytes: Buffer.byteLength(json),
  storedAt: 1_700_000,
  freshMs: 4_000,
};
const UNOPENED = 'Response cache: an entry sealed under another secret, or altered, was a miss';

describe('redisAnswerStore', () => {
  let redis: RunningRedis;
  let connection: RedisConnection;
  let raw: Redis;
  const logs = captureLogs('debug');

  beforeAll(async () => {
    redis = await startRedis();
    connection = connectRedis(new URL(redis.url), 'cache', { logger: false });
    raw = new Redis(redis.url);
    expect(await connection.ready(5_000)).toBe(true);
  });
  afterAll(async () => {
    await connection?.close();
    await raw?.quit();
    await redis?.close();
  });

  it('gives back the answer it kept, sealed in Redis and expiring after keepMs', async () => {
    const store = redisAnswerStore(connection, seal);
    await store.set('cache:kept', answer, 30_000);
    expect(await store.get('cache:kept')).toEqual(answer);
    const stored = await raw.getBuffer('cache:kept');
    expect(stored).not.toBeNull();
    expect(stored!.toString('latin1')).not.toContain('TID-STORE-1');
    expect(stored!.toString('latin1')).not.toContain('hello there');
    const ttl = await raw.pttl('cache:kept');
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
  });

  it('keeps an answer at least 1 ms when keepMs rounds to nothing, which Redis accepts', async () => {
    const store = redisAnswerStore(connection, seal);
    // Redis refuses PX 0 ("invalid expire time"): that write would fail and mark the connection down.
    await store.set('cache:short', answer, 0.2);
    expect(connection.up).toBe(true);
    expect(await raw.pttl('cache:short')).toBeLessThanOrEqual(1);
  });

  it('misses on a key never kept', async () => {
    expect(await redisAnswerStore(connection, seal).get('cache:absent')).toBeUndefined();
  });

  it('misses on a value sealed under another secret, or moved to another key, logging once', async () => {
    logs.lines.length = 0;
    const other = redisAnswerStore(connection, createSeal({ current: `${SECRET}-other` }));
    await other.set('cache:foreign', answer, 30_000);
    await raw.copy('cache:kept', 'cache:moved');
    const store = redisAnswerStore(connection, seal, logs.logger);
    expect(await store.get('cache:foreign')).toBeUndefined();
    expect(await store.get('cache:moved')).toBeUndefined();
    expect(logs.logged(UNOPENED)).toHaveLength(1);
    // The secret that sealed it still reads it.
    expect(await other.get('cache:foreign')).toEqual(answer);
  });

  it('opens what the previous secret sealed', async () => {
    const before = redisAnswerStore(
      connection,
      createSeal({ current: 'previous-secret-0123456789abcdef01' }),
    );
    await before.set('cache:rotated', answer, 30_000);
    const after = redisAnswerStore(
      connection,
      createSeal({ current: SECRET, previous: 'previous-secret-0123456789abcdef01' }),
    );
    expect(await after.get('cache:rotated')).toEqual(answer);
  });

  it('misses on a sealed value it cannot read (no header, or a header without its numbers)', async () => {
    await raw.set('cache:no-header', seal.seal(json, 'cache:no-header'));
    await raw.set(
      'cache:bad-header',
      seal.seal(`{"storedAt":"yesterday"}\n${json}`, 'cache:bad-header'),
    );
    await raw.set('cache:not-json', seal.seal(`storedAt=1\n${json}`, 'cache:not-json'));
    const store = redisAnswerStore(connection, seal);
    expect(await store.get('cache:no-header')).toBeUndefined();
    expect(await store.get('cache:bad-header')).toBeUndefined();
    expect(await store.get('cache:not-json')).toBeUndefined();
  });
});

describe('redisAnswerStore with Redis gone', () => {
  it('misses and drops writes, without a rejection, and the connection says it is down', async () => {
    const redis = await startRedis();
    const { logger, lines } = captureLogs();
    const connection = connectRedis(new URL(redis.url), 'cache', { logger });
    try {
      expect(await connection.ready(5_000)).toBe(true);
      const store = redisAnswerStore(connection, seal);
      await store.set('cache:before', answer, 30_000);
      expect(await store.get('cache:before')).toEqual(answer);
      await redis.close();
      await expect(store.get('cache:before')).resolves.toBeUndefined();
      await expect(store.set('cache:after', answer, 30_000)).resolves.toBeUndefined();
      expect(connection.up).toBe(false);
      const down = lines.filter((line) =>
        String(line.msg).startsWith('Response cache unavailable, answering without it'),
      );
      expect(down).toHaveLength(1);
    } finally {
      await connection.close();
      await redis.close();
    }
  });
});
