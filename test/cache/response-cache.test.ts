/**
 * The response cache, in memory and in a real redis-server on 127.0.0.1: hits make no upstream
 * call, keys never cross accounts or carry secrets, errors and unauthenticated requests are
 * never cached, copies sharing Redis share entries, and Redis going away costs only misses.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { print } from 'graphql';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  CACHE_KEY_PREFIX,
  canonicalJson,
  createResponseCache,
  type CacheEvent,
  type CacheStore,
} from '../../src/cache/response-cache.js';
import { createLogger } from '../../src/observability/logger.js';
import type { Gateway } from '../../src/http/server.js';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  SECOND_DEMO_ACCOUNT,
  SECOND_DEMO_CREDENTIALS,
  type SimulatorCredentials,
} from '../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import {
  basicAuth,
  createTestGateway,
  execute,
  executeText,
  pairAuth,
  type GraphQLResponse,
} from '../fixtures/harness.js';
import {
  HistoryRangeQuery,
  NumberWithHistoryQuery,
  OwnedNumbersQuery,
} from '../fixtures/operations.js';
import { freePort, startRedis, type RunningRedis } from '../fixtures/redis.js';
import {
  ownedNumbersReply,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';
import { untilAsync } from '../../support/wait.js';
import type { OwnedNumbersQuery as OwnedNumbersData } from '../gql/graphql.js';

const HMAC_KEY = 'test-hmac-key-0123456789abcdef-0123456789';
const TTL_MS = 60_000;

let redis: RunningRedis;
let admin: Redis;
let simulator: RecordingUpstream;
const closers: Array<() => Promise<void>> = [];
/** What an uncached gateway answers for each account: the exact data a cached one must give. */
const truth = new Map<SimulatorCredentials, GraphQLResponse<OwnedNumbersData>['body']>();

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
  simulator = await startRecordingUpstream();
  const reference = createTestGateway(simulator.url);
  for (const [credentials, account] of [
    [DEMO_CREDENTIALS, DEMO_ACCOUNT],
    [SECOND_DEMO_CREDENTIALS, SECOND_DEMO_ACCOUNT],
  ] as const) {
    const { body } = await execute(
      reference.gateway,
      OwnedNumbersQuery,
      {},
      basicAuth(credentials),
    );
    expect(body.data?.ownedNumbers?.map((n) => n.tid)).toEqual(account.numbers.map((n) => n.tid));
    truth.set(credentials, body);
  }
  await reference.close();
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await admin?.quit();
  await simulator?.close();
  await redis?.close();
});

beforeEach(async () => {
  simulator.resetCalls();
  await admin.flushdb();
});

interface CachedGateway {
  readonly gateway: Gateway;
  readonly hits: CacheEvent[];
  readonly misses: CacheEvent[];
}

async function cachedGateway(
  store: CacheStore,
  options: {
    ttlMs?: number;
    hmacKey?: string;
    upstreamUrl?: string;
    redisUrl?: string;
    staleIfErrorMs?: number;
    maxBytes?: number;
    maxEntryBytes?: number;
  } = {},
): Promise<CachedGateway> {
  const hits: CacheEvent[] = [];
  const misses: CacheEvent[] = [];
  const cache = createResponseCache(
    {
      ttlMs: options.ttlMs ?? TTL_MS,
      redisUrl: store === 'redis' ? new URL(options.redisUrl ?? redis.url) : null,
      hmacKey: store === 'redis' ? (options.hmacKey ?? HMAC_KEY) : null,
      ...(options.staleIfErrorMs === undefined ? {} : { staleIfErrorMs: options.staleIfErrorMs }),
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
      ...(options.maxEntryBytes === undefined ? {} : { maxEntryBytes: options.maxEntryBytes }),
    },
    { logger: false, onCacheHit: (e) => hits.push(e), onCacheMiss: (e) => misses.push(e) },
  );
  if (!cache) throw new Error('the cache should be on');
  expect(cache.store).toBe(store);
  if (!options.redisUrl) expect(await cache.ready(5_000)).toBe(true);
  const test = createTestGateway(options.upstreamUrl ?? simulator.url, { responseCache: cache });
  closers.push(async () => {
    await test.close();
    await cache.close();
  });
  return { gateway: test.gateway, hits, misses };
}

const owned = (gateway: Gateway, headers: Record<string, string>, type?: 'LOCAL' | 'TOLLFREE') =>
  type
    ? execute(gateway, OwnedNumbersQuery, { type }, headers)
    : execute(gateway, OwnedNumbersQuery, {}, headers);

describe.each(['memory', 'redis'] as const)('response cache in %s', (store) => {
  it('serves a second identical request from the cache, with no upstream call', async () => {
    const { gateway, hits, misses } = await cachedGateway(store);
    const first = await owned(gateway, basicAuth(DEMO_CREDENTIALS));
    expect(first.body).toEqual(truth.get(DEMO_CREDENTIALS));
    expect(simulator.calls).toHaveLength(1);
    expect(misses).toEqual([{ store, operationName: null }]);

    const second = await owned(gateway, basicAuth(DEMO_CREDENTIALS));
    expect(second).toEqual(first);
    expect(simulator.calls).toHaveLength(1);
    expect(hits).toEqual([{ store, operationName: null }]);
  });

  it('is a miss for other variables, and a hit for the same variables in another order', async () => {
    const { gateway, hits } = await cachedGateway(store);
    const headers = pairAuth(DEMO_CREDENTIALS);
    await owned(gateway, headers);
    await owned(gateway, headers, 'LOCAL');
    const tollfree = await owned(gateway, headers, 'TOLLFREE');
    expect(simulator.calls.map((c) => c.params.number_type ?? c.operation)).toEqual([
      'allownednumbers',
      'local',
      'tollfree',
    ]);
    expect(tollfree.body.data?.ownedNumbers?.every((n) => n.type === 'TOLLFREE')).toBe(true);
    expect(hits).toHaveLength(0);

    const tid = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
    const a = await execute(gateway, NumberWithHistoryQuery, { tid, start: 0, end: 3 }, headers);
    const callsAfterFirst = simulator.calls.length;
    const b = await executeText(
      gateway,
      // The same document, variables written in another order.
      print(NumberWithHistoryQuery),
      { end: 3, start: 0, tid },
      headers,
    );
    expect(b.body).toEqual(a.body);
    expect(simulator.calls).toHaveLength(callsAfterFirst);
    expect(hits).toHaveLength(1);
  });

  it('answers variables nested 5,000 deep with a clear error, never a 500', async () => {
    const { gateway } = await cachedGateway(store);
    // Written by hand: JSON.stringify itself overflows at this depth.
    let deep = '"x"';
    for (let i = 0; i < 5_000; i += 1) deep = i % 2 ? `[${deep}]` : `{"a":${deep}}`;
    const query = JSON.stringify('query($tid: ID!) { number(tid: $tid) { tid } }');
    const text = `{"query":${query},"variables":{"tid":${deep}}}`;
    const response = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        ...pairAuth(DEMO_CREDENTIALS),
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
      },
      body: text,
    });
    const body = (await response.json()) as GraphQLResponse<unknown>['body'];
    expect(response.status).toBe(400);
    expect(body.errors?.[0]?.message).toMatch(/^Variable "\$tid" got invalid value/);
    expect(simulator.calls).toHaveLength(0);
  });

  it('neither keys nor caches a request whose variables nest deeper than any argument takes', async () => {
    const { gateway } = await cachedGateway(store);
    const tid = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
    const query = 'query($tid: ID!) { number(tid: $tid) { tid } }';
    const nested = (depth: number): unknown => {
      let value: unknown = 'x';
      for (let i = 0; i < depth; i += 1) value = { a: value };
      return value;
    };
    // An unused variable is valid (graphql-js reads only those declared): the answer has data.
    const ask = (depth: number) =>
      executeText(gateway, query, { tid, unused: nested(depth) }, basicAuth(DEMO_CREDENTIALS));
    for (const depth of [40, 40]) expect((await ask(depth)).body.data).toBeTruthy();
    // Each went to the service: not cached.
    expect(simulator.calls).toHaveLength(2);
    for (const depth of [3, 3]) expect((await ask(depth)).body.data).toBeTruthy();
    // Shallow, the second is served from the cache.
    expect(simulator.calls).toHaveLength(3);
  });

  it('stops serving an answer CACHE_TTL_MS after it was stored, hits or not', async () => {
    const { gateway, hits, misses } = await cachedGateway(store, { ttlMs: 600 });
    const headers = basicAuth(DEMO_CREDENTIALS);
    await owned(gateway, headers);
    await sleep(350);
    await owned(gateway, headers);
    expect(simulator.calls).toHaveLength(1);
    // 700 ms after storing: expired, although the hit above was only 350 ms ago.
    await sleep(350);
    const later = await owned(gateway, headers);
    expect(later.body).toEqual(truth.get(DEMO_CREDENTIALS));
    expect(simulator.calls).toHaveLength(2);
    expect([hits.length, misses.length]).toEqual([1, 2]);
  });

  it("never gives one account another's cached answer, in either header style", async () => {
    const { gateway, hits } = await cachedGateway(store);
    const a = await owned(gateway, basicAuth(DEMO_CREDENTIALS));
    const b = await owned(gateway, pairAuth(SECOND_DEMO_CREDENTIALS));
    expect(a.body).toEqual(truth.get(DEMO_CREDENTIALS));
    expect(b.body).toEqual(truth.get(SECOND_DEMO_CREDENTIALS));
    expect(b.body).not.toEqual(a.body);
    expect(simulator.calls.map((c) => c.accountSysId)).toEqual([
      DEMO_CREDENTIALS.sysId,
      SECOND_DEMO_CREDENTIALS.sysId,
    ]);

    // The same credentials in the other header style are the same account: a hit, its own data.
    const aAgain = await owned(gateway, pairAuth(DEMO_CREDENTIALS));
    const bAgain = await owned(gateway, basicAuth(SECOND_DEMO_CREDENTIALS));
    expect(aAgain.body).toEqual(truth.get(DEMO_CREDENTIALS));
    expect(bAgain.body).toEqual(truth.get(SECOND_DEMO_CREDENTIALS));
    expect(simulator.calls).toHaveLength(2);
    expect(hits).toHaveLength(2);

    // The right sys_id with a wrong token is not that account: refused upstream, nothing served.
    const wrongToken = await owned(
      gateway,
      basicAuth({ sysId: DEMO_CREDENTIALS.sysId, authToken: 'not-the-token' }),
    );
    expect(wrongToken.body.data?.ownedNumbers).toBeNull();
    expect(wrongToken.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(simulator.calls).toHaveLength(3);
    expect(hits).toHaveLength(2);
  });

  it('never stores an answer with errors: refused credentials, upstream failures', async () => {
    const { gateway, hits, misses } = await cachedGateway(store);
    const refused = basicAuth({ sysId: 'AC-nobody', authToken: 'wrong' });
    for (let i = 0; i < 2; i += 1) {
      const { body } = await owned(gateway, refused);
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    // The refusal is remembered: the second is answered without a call, and neither is stored.
    expect(simulator.calls).toHaveLength(1);
    expect([hits.length, misses.length]).toEqual([0, 2]);

    // An upstream that fails once, then answers: the failure is not what the next request gets.
    let calls = 0;
    const flaky: ScriptedUpstream = await startScriptedUpstream(() =>
      (calls += 1) === 1 ? { status: 503, text: 'busy' } : ownedNumbersReply(['TN-1', 'TN-2']),
    );
    closers.push(() => flaky.close());
    const behindFlaky = await cachedGateway(store, { upstreamUrl: flaky.url });
    const headers = pairAuth(DEMO_CREDENTIALS);
    const failed = await owned(behindFlaky.gateway, headers);
    expect(failed.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    const answered = await owned(behindFlaky.gateway, headers);
    expect(answered.body.errors).toBeUndefined();
    expect(answered.body.data?.ownedNumbers?.map((n) => n.tid)).toEqual(['TN-1', 'TN-2']);
    const cached = await owned(behindFlaky.gateway, headers);
    expect(cached.body).toEqual(answered.body);
    expect(flaky.calls).toHaveLength(2);
    expect(behindFlaky.hits).toHaveLength(1);
    if (store === 'redis') expect(await admin.dbsize()).toBe(1);

    // A partial answer (BAD_USER_INPUT on a reversed range) and a refused document (a limit).
    const tid = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
    const tooManyAliases = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: ownedNumbers { tid }`).join(' ')} }`;
    const hitsBefore = hits.length;
    for (let i = 0; i < 2; i += 1) {
      const partial = await execute(
        gateway,
        HistoryRangeQuery,
        { tid, start: 5, end: 1 },
        basicAuth(DEMO_CREDENTIALS),
      );
      expect(partial.body.data?.number?.tid).toBe(tid);
      expect(partial.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      const limited = await executeText(
        gateway,
        tooManyAliases,
        undefined,
        basicAuth(DEMO_CREDENTIALS),
      );
      expect(limited.status).toBe(400);
      expect(limited.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    expect(hits).toHaveLength(hitsBefore);
    if (store === 'redis') expect(await admin.dbsize()).toBe(1);
  });

  it('leaves requests without usable credentials out of the cache entirely', async () => {
    const { gateway, hits, misses } = await cachedGateway(store);
    // `__typename` succeeds without credentials: the plugin would store it as a public answer.
    const unusable: Record<string, string>[] = [
      {},
      { authorization: 'Basic !!!' },
      { 'x-sys-id': 'only-half' },
    ];
    for (const headers of unusable) {
      for (let i = 0; i < 2; i += 1) {
        const { body } = await executeText(gateway, '{ __typename }', undefined, headers);
        expect(body).toEqual({ data: { __typename: 'Query' } });
        const refused = await owned(gateway, headers);
        expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      }
    }
    expect([hits.length, misses.length]).toEqual([0, 0]);
    expect(simulator.calls).toHaveLength(0);
    if (store === 'redis') expect(await admin.dbsize()).toBe(0);

    const withCredentials = await owned(gateway, basicAuth(DEMO_CREDENTIALS));
    expect(withCredentials.body).toEqual(truth.get(DEMO_CREDENTIALS));
  });

  it("tells onCacheHit/onCacheMiss the store and the request's operationName", async () => {
    const { gateway, hits, misses } = await cachedGateway(store);
    const body = JSON.stringify({ query: print(OwnedNumbersQuery), operationName: 'OwnedNumbers' });
    for (let i = 0; i < 2; i += 1) {
      const response = await gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
        body,
      });
      expect(await response.json()).toEqual(truth.get(DEMO_CREDENTIALS));
    }
    expect(misses).toEqual([{ store, operationName: 'OwnedNumbers' }]);
    expect(hits).toEqual([{ store, operationName: 'OwnedNumbers' }]);
  });

  it('stores a @defer answer once complete and serves it whole; not one whose deferred part failed', async () => {
    const deferred = JSON.stringify({
      query:
        '{ ownedNumbers(type: LOCAL) { tid ... @defer { history(start: 0, end: 1) { totalCount } } } }',
    });
    const multipart = async (gateway: Gateway) => {
      const response = await gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'multipart/mixed',
          ...basicAuth(DEMO_CREDENTIALS),
        },
        body: deferred,
      });
      expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
      const text = await response.text();
      return [...text.matchAll(/^\{.*\}$/gm)].map(([json]) => JSON.parse(json) as unknown);
    };
    const { gateway, hits } = await cachedGateway(store);
    const streamed = await multipart(gateway);
    expect(streamed.length).toBeGreaterThan(1);
    const calls = simulator.calls.length;
    const local = DEMO_ACCOUNT.numbers.filter((n) => n.type === 'local');
    expect(await multipart(gateway)).toEqual([
      {
        data: {
          ownedNumbers: local.map((n) => ({
            tid: n.tid,
            history: { totalCount: n.messages.length },
          })),
        },
      },
    ]);
    expect(simulator.calls).toHaveLength(calls);
    expect(hits).toHaveLength(1);

    const failing = await startScriptedUpstream((call) =>
      call.operation === 'smshistory' ? { status: 503, text: 'busy' } : ownedNumbersReply(['TN-1']),
    );
    closers.push(() => failing.close());
    // Same account, same query: a copy sharing the Redis would rightly hit the entry above.
    await admin.flushdb();
    const behindFailing = await cachedGateway(store, { upstreamUrl: failing.url });
    for (let i = 0; i < 2; i += 1) {
      const parts = await multipart(behindFailing.gateway);
      expect(JSON.stringify(parts)).toContain('The SMS service answered smshistory with HTTP 503');
    }
    expect(failing.calls.map((c) => c.operation)).toEqual([
      'ownednumbers',
      'smshistory',
      'ownednumbers',
      'smshistory',
    ]);
    expect(behindFailing.hits).toHaveLength(0);
  });

  it('does not cache introspection, even for credentials the service accepted', async () => {
    const { gateway, hits, misses } = await cachedGateway(store);
    // Accepted first: else nothing would be stored for them anyway.
    expect((await owned(gateway, basicAuth(DEMO_CREDENTIALS))).body.errors).toBeUndefined();
    const stored = store === 'redis' ? await admin.dbsize() : 0;
    for (let i = 0; i < 2; i += 1) {
      const schema = await executeText(
        gateway,
        '{ __schema { queryType { name } } }',
        undefined,
        basicAuth(DEMO_CREDENTIALS),
      );
      expect(schema.body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
      const type = await executeText(
        gateway,
        '{ __type(name: "Number") { name } }',
        undefined,
        pairAuth(DEMO_CREDENTIALS),
      );
      expect(type.body.data).toEqual({ __type: { name: 'Number' } });
      // Through a fragment too.
      const spread = await executeText(
        gateway,
        '{ ... on Query { ...Schema } } fragment Schema on Query { __schema { queryType { name } } }',
        undefined,
        basicAuth(DEMO_CREDENTIALS),
      );
      expect(spread.body.data).toEqual(schema.body.data);
    }
    expect(hits).toHaveLength(0);
    expect(misses).toHaveLength(7);
    if (store === 'redis') expect(await admin.dbsize()).toBe(stored);
  });
});

describe('response cache in memory, bounded', () => {
  it('keeps the most recently used answers within CACHE_MAX_BYTES, and none over maxEntryBytes', async () => {
    // About a dozen small answers fit in 10 kB (each costs its JSON, its key and an overhead).
    const { gateway, hits } = await cachedGateway('memory', {
      maxBytes: 10_000,
      maxEntryBytes: 2_000,
    });
    const headers = basicAuth(DEMO_CREDENTIALS);
    // Distinct documents make distinct entries; `__typename` keeps the upstream out of it.
    const ask = (n: number) =>
      executeText(gateway, `{ entry${n}: __typename }`, undefined, headers);
    // Only credentials the service accepted store answers: one real query verifies them.
    await executeText(gateway, '{ ownedNumbers { tid } }', undefined, headers);
    for (let n = 0; n < 100; n += 1) await ask(n);
    expect(hits).toHaveLength(0);
    await ask(99);
    await ask(98);
    expect(hits).toHaveLength(2);
    await ask(0);
    expect(hits).toHaveLength(2);

    // An answer over the entry limit runs every time: it is never stored.
    const tid = DEMO_ACCOUNT.numbers[0]?.tid ?? '';
    for (let i = 0; i < 2; i += 1) {
      const big = await execute(
        gateway,
        NumberWithHistoryQuery,
        { tid, start: 0, end: 50 },
        headers,
      );
      expect(JSON.stringify(big.body).length).toBeGreaterThan(2_000);
    }
    expect(hits).toHaveLength(2);
    expect(simulator.calls.filter((c) => c.operation === 'smshistory')).toHaveLength(2);
  });
});

describe('response cache in Redis, shared', () => {
  it('lets a second gateway copy with the same CACHE_HMAC_KEY answer from the first one’s entries', async () => {
    const first = await cachedGateway('redis');
    const second = await cachedGateway('redis');
    await owned(first.gateway, basicAuth(DEMO_CREDENTIALS));
    expect(simulator.calls).toHaveLength(1);

    const fromSecond = await owned(second.gateway, pairAuth(DEMO_CREDENTIALS));
    expect(fromSecond.body).toEqual(truth.get(DEMO_CREDENTIALS));
    expect(simulator.calls).toHaveLength(1);
    expect(second.hits).toHaveLength(1);

    // Another account on the second copy still goes upstream and gets its own data.
    const other = await owned(second.gateway, basicAuth(SECOND_DEMO_CREDENTIALS));
    expect(other.body).toEqual(truth.get(SECOND_DEMO_CREDENTIALS));
    expect(simulator.calls.map((c) => c.accountSysId)).toEqual([
      DEMO_CREDENTIALS.sysId,
      SECOND_DEMO_CREDENTIALS.sysId,
    ]);

    // A copy with another key fingerprints the same credentials differently: no shared entries.
    const otherKey = await cachedGateway('redis', { hmacKey: `${HMAC_KEY}-rotated` });
    await owned(otherKey.gateway, basicAuth(DEMO_CREDENTIALS));
    expect(otherKey.hits).toHaveLength(0);
    expect(simulator.calls).toHaveLength(3);
  });

  it('writes keys that hold neither the token, the sys_id nor any encoding of them, each with an expiry', async () => {
    const { gateway } = await cachedGateway('redis');
    for (const credentials of [DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS]) {
      await owned(gateway, basicAuth(credentials));
      await owned(gateway, pairAuth(credentials), 'LOCAL');
      const tid = (credentials === DEMO_CREDENTIALS ? DEMO_ACCOUNT : SECOND_DEMO_ACCOUNT).numbers[0]
        ?.tid;
      await execute(
        gateway,
        NumberWithHistoryQuery,
        { tid: tid ?? '', start: 0, end: 2 },
        basicAuth(credentials),
      );
    }
    const keys: string[] = [];
    for await (const batch of admin.scanStream({ count: 100 }) as AsyncIterable<string[]>)
      keys.push(...batch);
    expect(keys).toHaveLength(6);

    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    for (const { sysId, authToken } of [DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS]) {
      const forbidden = [
        sysId,
        authToken,
        b64(`${sysId}:${authToken}`),
        b64(sysId),
        b64(authToken),
        encodeURIComponent(authToken),
        sha256(authToken),
        sha256(sysId),
        sha256(`${sysId}:${authToken}`),
        sha256(JSON.stringify([sysId, authToken])),
      ].map((s) => s.toLowerCase());
      for (const key of keys) {
        for (const secret of forbidden) expect(key.toLowerCase()).not.toContain(secret);
        const value = (await admin.get(key)) ?? '';
        for (const secret of forbidden.slice(1)) expect(value.toLowerCase()).not.toContain(secret);
      }
    }
    for (const key of keys) {
      expect(key).toMatch(new RegExp(`^${CACHE_KEY_PREFIX}[\\w-]{22}:[\\w-]{43}:[0-9a-f]{64}$`));
      const ttl = await admin.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(TTL_MS);
    }
  });

  it('seals each value; one that does not open (altered, or in clear) is a miss, logged once', async () => {
    const lines: string[] = [];
    const logger = createLogger('warn', { write: (line: string) => lines.push(line) });
    const misses: CacheEvent[] = [];
    const cache = createResponseCache(
      { ttlMs: TTL_MS, redisUrl: new URL(redis.url), hmacKey: HMAC_KEY },
      { logger, onCacheMiss: (event) => misses.push(event) },
    );
    if (!cache) throw new Error('the cache should be on');
    expect(await cache.ready(5_000)).toBe(true);
    const test = createTestGateway(simulator.url, { responseCache: cache });
    closers.push(async () => {
      await test.close();
      await cache.close();
    });
    const stored = await owned(test.gateway, basicAuth(DEMO_CREDENTIALS));
    expect(stored.body).toEqual(truth.get(DEMO_CREDENTIALS));
    const [key = ''] = await admin.keys('*');
    const sealed = (await admin.getBuffer(key)) ?? Buffer.alloc(0);
    for (const { tid, number } of DEMO_ACCOUNT.numbers) {
      expect(sealed.toString('latin1')).not.toContain(tid);
      expect(sealed.toString('latin1')).not.toContain(number);
    }

    sealed[20] = (sealed[20] ?? 0) ^ 0x01;
    await admin.set(key, sealed, 'PX', TTL_MS);
    expect((await owned(test.gateway, basicAuth(DEMO_CREDENTIALS))).body).toEqual(stored.body);
    // The miss's answer is stored once it has been sent: wait for it before writing over it.
    await untilAsync(async () => !(await admin.getBuffer(key))?.equals(sealed));
    // What a version before the seal wrote: a header line and the answer's JSON, in clear.
    const clear = `${JSON.stringify({ storedAt: Date.now(), freshMs: TTL_MS })}\n${JSON.stringify(stored.body)}`;
    await admin.set(key, clear, 'PX', TTL_MS);
    expect((await owned(test.gateway, basicAuth(DEMO_CREDENTIALS))).body).toEqual(stored.body);
    expect(misses).toHaveLength(3);
    expect(simulator.calls).toHaveLength(3);
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
      'Response cache: an entry sealed under another secret, or altered, was a miss',
    ]);
    // Each miss stored the answer afresh, sealed: the next request is a hit.
    await owned(test.gateway, basicAuth(DEMO_CREDENTIALS));
    expect(simulator.calls).toHaveLength(3);
  });

  it('answers a conditional request (If-None-Match: an existing key) normally, never with 304', async () => {
    const { gateway } = await cachedGateway('redis');
    const stored = await owned(gateway, basicAuth(DEMO_CREDENTIALS));
    const [key] = await admin.keys('*');
    expect(key).toBeDefined();

    const body = JSON.stringify({ query: print(OwnedNumbersQuery) });
    const ask = (headers: Record<string, string>) =>
      gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'if-none-match': key ?? '', ...headers },
        body,
      });
    const other = await ask(basicAuth(SECOND_DEMO_CREDENTIALS));
    expect(other.status).toBe(200);
    expect(await other.json()).toEqual(truth.get(SECOND_DEMO_CREDENTIALS));
    const none = await ask({});
    expect(none.status).toBe(200);
    expect(((await none.json()) as typeof stored.body).errors?.[0]?.extensions?.code).toBe(
      'UNAUTHENTICATED',
    );

    // And no answer hands out its key as an ETag to begin with.
    const hit = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
      body,
    });
    expect(await hit.json()).toEqual(stored.body);
    expect(hit.headers.get('etag')).toBeNull();
  });

  it('answers from the upstream while Redis is unreachable, and uses it once it is up', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const port = await freePort();
    const password = 'pw-S3CRET-for-redis';
    const cache = createResponseCache(
      {
        ttlMs: TTL_MS,
        redisUrl: new URL(`redis://:${password}@127.0.0.1:${port}`),
        hmacKey: HMAC_KEY,
      },
      { logger },
    );
    if (!cache) throw new Error('the cache should be on');
    expect(await cache.ready(200)).toBe(false);
    const test = createTestGateway(simulator.url, { responseCache: cache });
    closers.push(async () => {
      await test.close();
      await cache.close();
    });
    for (let i = 0; i < 3; i += 1) {
      const { status, body } = await owned(test.gateway, basicAuth(DEMO_CREDENTIALS));
      expect(status).toBe(200);
      expect(body).toEqual(truth.get(DEMO_CREDENTIALS));
    }
    expect(simulator.calls).toHaveLength(3);

    const late = await startRedis({ port, password });
    closers.push(() => late.close());
    expect(await cache.ready(10_000)).toBe(true);
    await owned(test.gateway, basicAuth(DEMO_CREDENTIALS));
    const cached = await owned(test.gateway, basicAuth(DEMO_CREDENTIALS));
    expect(cached.body).toEqual(truth.get(DEMO_CREDENTIALS));
    expect(simulator.calls).toHaveLength(4);

    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages.filter((m) => m.startsWith('Response cache unavailable'))).toHaveLength(1);
    expect(messages.filter((m) => m === 'Response cache: Redis reachable again')).toHaveLength(1);
    expect(lines.join('\n')).not.toContain(password);
  });
});

describe('canonicalJson', () => {
  /** The keys' former writer (recursive): entries stored before must keep their keys. */
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value === null || typeof value !== 'object'
        ? value
        : Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
          );

  it('writes what JSON.stringify wrote of the sorted value, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(JSON.stringify(sorted(value)));
      }),
    );
  });
});
