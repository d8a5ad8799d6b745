/**
 * Stale-if-error against a real loopback upstream that fails on command, with the cache in
 * memory and in a real redis-server: a recent answer is served, marked, when the service fails
 * the same request from the same account; never to another account or query, never to refused
 * credentials, never without saying so; and fresh answers come back once the service does.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  CACHE_KEY_PREFIX,
  createResponseCache,
  type CacheStore,
  type StaleEvent,
} from '../../src/cache/response-cache.js';
import type { UpstreamSettings } from '../../src/config/config.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { Gateway } from '../../src/http/server.js';
import { DEMO_CREDENTIALS, SECOND_DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, createTestGateway, pairAuth } from '../fixtures/harness.js';
import { startRedis, type RunningRedis } from '../fixtures/redis.js';
import {
  historyReply,
  accountScript,
  startScriptedUpstream,
  type ScriptedCall,
  type ScriptedReply,
  type ScriptedUpstream,
} from '../../support/scripted-upstream.js';
import { untilAsync } from '../../support/wait.js';

const HMAC_KEY = 'stale-test-hmac-key-0123456789abcdef-0123';
const TTL_MS = 300;
const WINDOW_MS = 60_000;
const OWNED = '{ ownedNumbers { tid } }';
const LOCAL = '{ ownedNumbers(type: LOCAL) { tid } }';
const WITH_HISTORY = '{ ownedNumbers { tid history(start: 0, end: 1) { totalCount } } }';

type Mode =
  | 'ok'
  | '503'
  | 'hang'
  | 'reset'
  | '429'
  | '401'
  | 'history-503'
  | 'refused-in-body'
  | 'failure-in-body';
let mode: Mode = 'ok';
/** The numbers the healthy service reports: changed by tests to tell fresh from stale. */
let tids: string[] = ['TN-1', 'TN-2'];

const replies: Record<Exclude<Mode, 'ok' | 'history-503'>, ScriptedReply> = {
  '503': { status: 503, text: 'busy' },
  hang: { hang: true },
  reset: { reset: true },
  '429': { status: 429, text: '', headers: { 'retry-after': '30' } },
  '401': { status: 401, text: '' },
  // A revoked token, as the service may refuse it: HTTP 200 and success "0".
  'refused-in-body': { json: { success: '0', error: 'Invalid credentials' } },
  // The service answered about the request itself (not an outage).
  'failure-in-body': { json: { success: '0', error: 'something about the request' } },
};

let upstream: ScriptedUpstream;
let redis: RunningRedis;
let admin: Redis;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  // `tids` changes between tests: the script reads it at each call.
  const history = (call: ScriptedCall) => (mode === 'ok' ? historyReply(call) : replies['503']);
  upstream = await startScriptedUpstream((call) =>
    mode === 'ok' || mode === 'history-503' ? accountScript(tids, history)(call) : replies[mode],
  );
  redis = await startRedis();
  admin = new Redis(redis.url);
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await admin?.quit();
  await redis?.close();
  await upstream?.close();
});

beforeEach(async () => {
  mode = 'ok';
  tids = ['TN-1', 'TN-2'];
  await admin.flushdb();
});

interface StaleGateway {
  readonly gateway: Gateway;
  readonly served: StaleEvent[];
  /** Requests answered from the cache. */
  readonly hits: () => number;
  readonly metricsText: () => Promise<string>;
}

async function staleGateway(
  store: CacheStore,
  options: { windowMs?: number; resilience?: Partial<UpstreamSettings> } = {},
): Promise<StaleGateway> {
  const served: StaleEvent[] = [];
  let hits = 0;
  const metrics = createMetrics();
  // Before the cache is made: it keeps the clock it finds (Date.now) for the answers' age.
  if (store === 'memory') fakeDate();
  const cache = createResponseCache(
    {
      ttlMs: TTL_MS,
      staleIfErrorMs: options.windowMs ?? WINDOW_MS,
      redisUrl: store === 'redis' ? new URL(redis.url) : null,
      hmacKey: store === 'redis' ? HMAC_KEY : null,
    },
    {
      logger: false,
      onCacheHit: () => {
        hits += 1;
      },
      onStaleServed: (event) => {
        served.push(event);
        metrics.staleServed(event.code);
      },
    },
  );
  if (!cache) throw new Error('the cache should be on');
  expect(await cache.ready(5_000)).toBe(true);
  const test = createTestGateway(upstream.url, {
    responseCache: cache,
    timeoutMs: 300,
    ...(options.resilience ? { resilience: options.resilience } : {}),
  });
  closers.push(async () => {
    await test.close();
    await cache.close();
  });
  return {
    gateway: test.gateway,
    served,
    hits: () => hits,
    metricsText: () => metrics.registry.metrics(),
  };
}

interface Answer {
  readonly warning: string | null;
  readonly body: {
    data?: { ownedNumbers?: { tid: string }[] | null } | null;
    errors?: { extensions?: { code?: string } }[];
    extensions?: { stale?: { ageMs: number } };
  };
}

async function ask(
  gateway: Gateway,
  query: string,
  headers: Record<string, string> = basicAuth(DEMO_CREDENTIALS),
): Promise<Answer> {
  const response = await gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return {
    warning: response.headers.get('warning'),
    body: (await response.json()) as Answer['body'],
  };
}

const codes = (answer: Answer) => answer.body.errors?.map((e) => e.extensions?.code);

/**
 * Until the answers stored so far are past their TTL (stale, no longer fresh), with no fixed wait.
 * In Redis, by each entry's remaining life: it is kept TTL_MS + the window from its SET, which
 * comes after its storedAt, so a PTTL down to the window means TTL_MS has passed since storedAt.
 * In memory, the cache tells an answer's age by Date alone, faked for the test (still advancing):
 * it is moved past the TTL.
 */
async function pastTtl(store: CacheStore): Promise<void> {
  if (store === 'memory') return moveClock(TTL_MS);
  await untilAsync(async () => {
    const left = await remainingLives();
    return left.length > 0 && left.every((ms) => ms >= 0 && ms <= WINDOW_MS);
  }, TTL_MS + 5_000);
}

/** Until the answers stored so far are past their TTL and a `windowMs` stale-if-error window. */
async function pastWindow(store: CacheStore, windowMs: number): Promise<void> {
  if (store === 'memory') return moveClock(TTL_MS + windowMs + 1);
  // Stored (the SET is not awaited by the request), then gone: Redis expired it.
  await untilAsync(async () => (await remainingLives()).length > 0);
  await untilAsync(async () => (await remainingLives()).length === 0, TTL_MS + windowMs + 5_000);
}

/** PTTL of every stored answer in Redis (the database is emptied before each test). */
async function remainingLives(): Promise<number[]> {
  const keys = await admin.keys(`${CACHE_KEY_PREFIX}*`);
  return (await Promise.all(keys.map((key) => admin.pttl(key)))).filter((ms) => ms !== -2);
}

/** Date faked alone, still advancing, for the rest of the test: moveClock() moves it on. */
function fakeDate(): void {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  onTestFinished(() => void vi.useRealTimers());
}

/** Moves Date, the clock the in-memory cache reads, `ms` ahead. */
function moveClock(ms: number): void {
  if (!vi.isFakeTimers()) throw new Error('moveClock: Date is not faked (fakeDate first)');
  vi.setSystemTime(Date.now() + ms);
}

describe.each(['memory', 'redis'] as const)('stale-if-error in %s', (store) => {
  it('serves the expired answer, marked with its age, while the service fails; fresh again after', async () => {
    const { gateway, served, metricsText } = await staleGateway(store);
    const before = Date.now();
    const fresh = await ask(gateway, OWNED);
    expect(fresh.body).toEqual({ data: { ownedNumbers: [{ tid: 'TN-1' }, { tid: 'TN-2' }] } });
    expect(fresh.warning).toBeNull();
    await pastTtl(store);

    mode = '503';
    const calls = upstream.calls.length;
    const stale = await ask(gateway, OWNED);
    const bound = Date.now() - before;
    // The service was asked first: the stale answer stands in for its failure.
    expect(upstream.calls.length).toBe(calls + 1);
    expect(stale.body.data).toEqual(fresh.body.data);
    expect(stale.body.errors).toBeUndefined();
    const ageMs = stale.body.extensions?.stale?.ageMs ?? -1;
    expect(ageMs).toBeGreaterThanOrEqual(TTL_MS);
    expect(ageMs).toBeLessThanOrEqual(bound);
    expect(stale.warning).toMatch(/^110 - "Response is Stale"/);
    expect(served).toMatchObject([{ store, code: 'UPSTREAM_ERROR', operationName: null }]);
    expect(await metricsText()).toContain(
      'sms_response_cache_stale_total{code="UPSTREAM_ERROR"} 1',
    );

    // Another account, and another query of this account: their own errors, no stale data.
    const other = await ask(gateway, OWNED, pairAuth(SECOND_DEMO_CREDENTIALS));
    expect(codes(other)).toEqual(['UPSTREAM_ERROR']);
    expect(other.body.data?.ownedNumbers).toBeNull();
    expect(other.body.extensions?.stale).toBeUndefined();
    expect(other.warning).toBeNull();
    const otherQuery = await ask(gateway, LOCAL);
    expect(codes(otherQuery)).toEqual(['UPSTREAM_ERROR']);
    expect(otherQuery.body.extensions?.stale).toBeUndefined();

    // Credentials the service refuses see no data, stale or not.
    mode = '401';
    const refused = await ask(gateway, OWNED);
    expect(codes(refused)).toEqual(['UNAUTHENTICATED']);
    expect(refused.body.data?.ownedNumbers).toBeNull();
    expect(refused.body.extensions?.stale).toBeUndefined();
    expect(refused.warning).toBeNull();

    // The service is back: a fresh answer, unmarked, which is then cached as usual.
    mode = 'ok';
    tids = ['TN-1', 'TN-2', 'TN-3'];
    const back = await ask(gateway, OWNED);
    expect(back.body).toEqual({
      data: { ownedNumbers: [{ tid: 'TN-1' }, { tid: 'TN-2' }, { tid: 'TN-3' }] },
    });
    expect(back.warning).toBeNull();
    const callsAfter = upstream.calls.length;
    expect((await ask(gateway, OWNED)).body).toEqual(back.body);
    expect(upstream.calls.length).toBe(callsAfter);
    expect(served).toHaveLength(1);
  });

  it.each([
    ['a timeout', 'hang', 'UPSTREAM_TIMEOUT'],
    ['a reset connection', 'reset', 'UPSTREAM_ERROR'],
    ['a 429', '429', 'RATE_LIMITED'],
  ] as const)('serves stale for %s', async (_, failure, code) => {
    const { gateway, served } = await staleGateway(store);
    const fresh = await ask(gateway, OWNED);
    await pastTtl(store);
    mode = failure;
    const stale = await ask(gateway, OWNED);
    expect(stale.body.data).toEqual(fresh.body.data);
    expect(stale.body.extensions?.stale?.ageMs).toBeGreaterThanOrEqual(TTL_MS);
    expect(served.map((e) => e.code)).toEqual([code]);
  });

  it.each(['refused-in-body', 'failure-in-body'] as const)(
    'serves nothing stale when the service answered about the request itself (%s)',
    async (answered) => {
      const { gateway, served } = await staleGateway(store);
      const fresh = await ask(gateway, OWNED);
      expect(fresh.body.data?.ownedNumbers).toHaveLength(2);
      await pastTtl(store);
      mode = answered;
      const refused = await ask(gateway, OWNED);
      expect(refused.body.data?.ownedNumbers ?? null).toBeNull();
      expect(codes(refused)).toEqual([
        answered === 'refused-in-body' ? 'UNAUTHENTICATED' : 'UPSTREAM_ERROR',
      ]);
      expect(refused.body.extensions?.stale).toBeUndefined();
      expect(refused.warning).toBeNull();
      expect(served).toEqual([]);
    },
  );

  it('keeps nothing for credentials the service has not accepted', async () => {
    const { gateway, hits } = await staleGateway(store);
    const invented = { 'x-sys-id': 'AC-invented', 'x-auth-token': 'made-up' };
    // No upstream call: the credentials are never verified, so the answer is not stored.
    for (let i = 0; i < 3; i += 1) await ask(gateway, '{ __typename }', invented);
    expect(hits()).toBe(0);
    // Credentials the service answered: the same question is stored and then served.
    await ask(gateway, OWNED);
    await ask(gateway, '{ __typename }');
    await ask(gateway, '{ __typename }');
    expect(hits()).toBe(1);
  });

  it('serves stale while the breaker is open (UPSTREAM_UNAVAILABLE)', async () => {
    const { gateway, served } = await staleGateway(store, {
      resilience: { breakerThreshold: 1, breakerCooldownMs: 60_000 },
    });
    const fresh = await ask(gateway, OWNED);
    await pastTtl(store);
    mode = '503';
    expect(codes(await ask(gateway, LOCAL))).toEqual(['UPSTREAM_ERROR']);
    const calls = upstream.calls.length;
    const stale = await ask(gateway, OWNED);
    expect(upstream.calls.length).toBe(calls);
    expect(stale.body.data).toEqual(fresh.body.data);
    expect(served.map((e) => e.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });

  it('replaces a partial answer (some fields failed upstream) with the complete stale one', async () => {
    const { gateway, served } = await staleGateway(store);
    const fresh = await ask(gateway, WITH_HISTORY);
    expect(fresh.body.errors).toBeUndefined();
    await pastTtl(store);
    mode = 'history-503';
    const stale = await ask(gateway, WITH_HISTORY);
    expect(stale.body.data).toEqual(fresh.body.data);
    expect(stale.body.errors).toBeUndefined();
    expect(stale.body.extensions?.stale).toBeDefined();
    expect(served).toHaveLength(1);
  });

  it('gives the error once the answer is older than TTL plus the window', async () => {
    const { gateway, served } = await staleGateway(store, { windowMs: 200 });
    await ask(gateway, OWNED);
    await pastWindow(store, 200);
    mode = '503';
    const failed = await ask(gateway, OWNED);
    expect(codes(failed)).toEqual(['UPSTREAM_ERROR']);
    expect(failed.body.extensions?.stale).toBeUndefined();
    expect(failed.warning).toBeNull();
    expect(served).toHaveLength(0);
  });
});

describe('stale-if-error in Redis, shared', () => {
  it('lets one gateway copy serve, stale, an answer another copy stored', async () => {
    const first = await staleGateway('redis');
    const second = await staleGateway('redis');
    const fresh = await ask(first.gateway, OWNED);
    await pastTtl('redis');
    mode = '503';
    const stale = await ask(second.gateway, OWNED, pairAuth(DEMO_CREDENTIALS));
    expect(stale.body.data).toEqual(fresh.body.data);
    expect(stale.body.extensions?.stale?.ageMs).toBeGreaterThanOrEqual(TTL_MS);
    expect(stale.warning).toMatch(/^110 /);
    expect(second.served).toHaveLength(1);
    // Still only for that account.
    const other = await ask(second.gateway, OWNED, basicAuth(SECOND_DEMO_CREDENTIALS));
    expect(codes(other)).toEqual(['UPSTREAM_ERROR']);
  });
});
