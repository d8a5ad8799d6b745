/**
 * What an operator watching Redis sees (MONITOR, a raw subscriber, the stored bytes) while the
 * gateway, configured as in production (createApp, REDIS_URL, GATEWAY_SECRET), delivers a live
 * message and caches, then serves stale, an answer holding messages: no credential, tid, number
 * or message text in clear, only sealed values (src/redis/seal.ts).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createApp } from '../../src/start.js';
import { loadConfig } from '../../src/config/config.js';
import { startGrowingUpstream, type GrowingUpstream } from '../../support/growing-upstream.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';
import { subscribeSse, type SseStream } from '../fixtures/sse.js';
import { until, untilAsync } from '../../support/wait.js';

const SYS_ID = 'ACSEALED4471';
const TOKEN = `tok-${SYS_ID}`;
const TID = 'TIDSEALED8802';
const HEADERS = { 'x-sys-id': SYS_ID, 'x-auth-token': TOKEN };
const TTL_MS = 400;
const STALE_IF_ERROR_MS = 60_000;
/** What must never be readable in Redis: the growing upstream's phone, number and bodies. */
const CLEAR = [SYS_ID, TOKEN, TID, '15550000000', '15125551000', ' on TIDSEALED'];

const LIVE = `subscription { messageAdded(tids: ["${TID}"]) { id tid phone body } }`;
const CACHED = `query Sealed($tid: ID!) {
  number(tid: $tid) { tid number messages(first: 5) { edges { node { id phone body } } } }
}`;

let redis: RunningRedis;
let upstream: GrowingUpstream;
let app: App;
let monitor: Redis;
let raw: Redis;
const watched: string[] = [];
const stream: SseStream[] = [];

beforeAll(async () => {
  redis = await startRedis();
  // Everything the gateway sends Redis, as MONITOR shows it, and every payload on its channels.
  // monitor() opens a connection of its own and leaves the client it is called on open: called
  // on one afterAll closes (a client left open retries the stopped server for the rest of the
  // worker, logging "[ioredis] Unhandled error event" into other files' tests), once that client
  // is ready (its ready check, sent as MONITOR starts, is a line ioredis can take for a reply).
  raw = new Redis(redis.url);
  await raw.ping();
  monitor = await raw.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => watched.push(args.join(' ')));
  raw.on('pmessageBuffer', (_p: Buffer, _c: Buffer, payload: Buffer) =>
    watched.push(payload.toString('latin1')),
  );
  await raw.psubscribe('sms-gateway:*');
  upstream = await startGrowingUpstream({ [SYS_ID]: [TID] });
  const config = loadConfig({
    UPSTREAM_URL: upstream.url,
    REDIS_URL: redis.url,
    GATEWAY_SECRET: 'sealed-at-rest-secret-0123456789abcdef0123',
    CACHE_TTL_MS: String(TTL_MS),
    CACHE_STALE_IF_ERROR_MS: String(STALE_IF_ERROR_MS),
    LIVE_POLL_MS: '100',
  });
  app = await createApp(config, { logger: false });
}, 30_000);

afterAll(async () => {
  for (const s of stream) s.close();
  await app?.close();
  monitor?.disconnect();
  raw?.disconnect();
  await upstream?.close();
  await redis?.close();
});

async function post(query: string, variables: Record<string, unknown>) {
  const response = await app.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...HEADERS },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: unknown; extensions?: Record<string, unknown> };
}

describe('what reaches Redis is sealed', () => {
  it('a live message and a cached (then stale) answer leave no account data in clear', async () => {
    const live = await subscribeSse(app.gateway, LIVE, HEADERS);
    stream.push(live);
    await until(() => upstream.callsOf('smshistory') >= 3, 5_000);
    const [id] = upstream.add(TID, 1);
    await live.waitFor(1, 5_000);
    const added = live.events[0]?.data?.messageAdded as Record<string, string>;
    expect(added).toMatchObject({ id, tid: TID, phone: '15550000000' });
    expect(added.body).toContain(TID);

    const admin = new Redis(redis.url);
    try {
      const fresh = await post(CACHED, { tid: TID });
      expect(JSON.stringify(fresh.data)).toContain(added.body);
      // Past its TTL, with the service failing: the stored copy comes back, stale, as it was.
      // The answer is kept for TTL_MS + STALE_IF_ERROR_MS from when it was stored (after its
      // storedAt), so a PTTL down to STALE_IF_ERROR_MS means TTL_MS has passed since storedAt.
      await untilAsync(async () => {
        const keys = await admin.keys('sms-gateway:response-cache:*');
        const left = await Promise.all(keys.map((key) => admin.pttl(key)));
        return left.length > 0 && left.every((ms) => ms >= 0 && ms <= STALE_IF_ERROR_MS);
      }, TTL_MS + 3_000);
      upstream.failWith({ status: 503, text: '' });
      const stale = await post(CACHED, { tid: TID });
      upstream.failWith(null);
      expect(stale.extensions?.stale).toBeDefined();
      expect(stale.data).toEqual(fresh.data);

      const keys = await admin.keys('sms-gateway:*');
      const values = await Promise.all(keys.map((key) => admin.getBuffer(key)));
      const text = (value: Buffer | null) => value?.toString('latin1') ?? '';
      watched.push(...keys, ...values.map(text));
      // Not vacuous: an answer, a seen state and an event were written, and were watched.
      expect(keys.some((k) => k.startsWith('sms-gateway:response-cache:'))).toBe(true);
      expect(keys.some((k) => k.startsWith('sms-gateway:live:v1:seen:'))).toBe(true);
      expect(watched.some((line) => /^publish sms-gateway:live:v1:events:/i.test(line))).toBe(true);
      expect(watched.some((line) => /^set sms-gateway:response-cache:/i.test(line))).toBe(true);
    } finally {
      admin.disconnect();
    }
    const everything = watched.join('\n');
    for (const clear of CLEAR) expect(everything, clear).not.toContain(clear);
    expect(everything).not.toContain(id);
  });
});
