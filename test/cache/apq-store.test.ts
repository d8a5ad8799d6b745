/**
 * The APQ store in a real redis-server, wired as createApp wires it (REDIS_URL, GATEWAY_SECRET):
 * a query text can hold inline literals (a tid here), so what reaches Redis (MONITOR, the stored
 * bytes) holds no query text in clear, only a value sealed for its key (src/redis/seal.ts).
 * Copies with the same secret still share hashes; one with another secret treats them as misses.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createApp } from '../../src/start.js';
import { APQ_KEY_PREFIX } from '../../src/cache/apq-store.js';
import { loadConfig } from '../../src/config/config.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { captureLogs } from '../fixtures/captured-logs.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';

const SECRET = 'apq-sealed-test-secret-0123456789abcdef';
const TID = DEMO_ACCOUNT.numbers[0]!.tid;
const QUERY = `query LookupByTid { number(tid: "${TID}") { tid number } }`;
const HASH = createHash('sha256').update(QUERY).digest('hex');
const PERSISTED = { persistedQuery: { version: 1, sha256Hash: HASH } };
const HEADERS = { 'x-sys-id': DEMO_CREDENTIALS.sysId, 'x-auth-token': DEMO_CREDENTIALS.authToken };
/** What must never be readable in Redis: the text, its literal, its operation. */
const CLEAR = [QUERY, TID, 'LookupByTid', 'number(tid'];

let redis: RunningRedis;
let monitor: Redis;
let admin: Redis;
const watched: string[] = [];
const apps: App[] = [];

function copy(secret: string, logger: App['logger'] = false): Promise<App> {
  const config = loadConfig({ REDIS_URL: redis.url, GATEWAY_SECRET: secret, LIVE_POLL_MS: '0' });
  return createApp(config, { logger }).then((app) => (apps.push(app), app));
}

async function post(app: App, body: object) {
  const response = await app.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...HEADERS },
    body: JSON.stringify(body),
  });
  return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
}

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
  // monitor() opens a connection of its own and leaves the client it is called on open: called
  // on one afterAll closes (a client left open retries the stopped server for the rest of the
  // worker, logging "[ioredis] Unhandled error event" into other files' tests), once that client
  // is ready (its ready check, sent as MONITOR starts, is a line ioredis can take for a reply).
  await admin.ping();
  monitor = await admin.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => watched.push(args.join(' ')));
}, 30_000);

afterAll(async () => {
  await Promise.allSettled(apps.map((app) => app.close()));
  monitor?.disconnect();
  admin?.disconnect();
  await redis?.close();
});

describe('the APQ store in Redis', () => {
  it('keeps no query text in clear, and copies with the same secret still share a hash', async () => {
    const [first, second] = [await copy(SECRET), await copy(SECRET)];
    const registered = await post(first, { query: QUERY, extensions: PERSISTED });
    expect(registered.errors).toBeUndefined();
    expect(registered.data).toEqual({ number: { tid: TID, number: expect.any(String) } });
    const byHash = await post(second, { extensions: PERSISTED });
    expect(byHash).toEqual(registered);

    const keys = await admin.keys('sms-gateway:apq:*');
    expect(keys).toEqual([`${APQ_KEY_PREFIX}${HASH}`]);
    const stored = (await admin.getBuffer(keys[0]!)) as Buffer;
    expect(await admin.ttl(keys[0]!)).toBeGreaterThan(0);
    const everything = [stored.toString('latin1'), stored.toString('utf8'), ...watched].join('\n');
    for (const clear of CLEAR) expect(everything, clear).not.toContain(clear);
    // Not vacuous: the value was written (sealed, longer than the text), and MONITOR saw it.
    expect(stored.length).toBeGreaterThan(QUERY.length);
    expect(watched.some((line) => /^set sms-gateway:apq:/i.test(line))).toBe(true);
  });

  it('a copy with another secret cannot open it: a miss (the client resends), said once', async () => {
    const logs = captureLogs('warn');
    const other = await copy('another-apq-secret-0123456789abcdef0123', logs.logger);
    for (let i = 0; i < 2; i += 1) {
      expect((await post(other, { extensions: PERSISTED })).errors?.[0]?.message).toBe(
        'PersistedQueryNotFound',
      );
    }
    expect(
      logs.logged('APQ store: an entry sealed under another secret, or altered, was a miss'),
    ).toHaveLength(1);
  });
});
