/**
 * The opt-in response cache (CACHE_TTL_MS): yoga's response-cache plugin, keyed by an HMAC
 * fingerprint of the request's credentials plus the operation and its variables, kept in this
 * process's memory or, with REDIS_URL, in Redis shared by every gateway copy.
 *
 * Only requests with usable credentials take part: anything else is neither read from nor
 * written to the cache, so an answer can only ever reach a request carrying the very same
 * sys_id and auth_token as the one that produced it.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createRedisCache } from '@envelop/response-cache-redis';
import {
  createInMemoryCache,
  useResponseCache,
  type Cache,
} from '@graphql-yoga/plugin-response-cache';
import type { Plugin } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { ResponseCacheSettings } from './config.js';
import { readCredentials } from './credentials.js';
import type { Logger } from './logger.js';

export type CacheStore = 'memory' | 'redis';

/** What a cache-hit or -miss hook is told: no account data, so it is safe as a metric label. */
export interface CacheEvent {
  readonly store: CacheStore;
  readonly operationName: string | null;
}

export interface ResponseCacheOptions {
  /** Where Redis failures are logged; false for none. */
  readonly logger: Logger | false;
  /** Called for each request answered from the cache. */
  readonly onCacheHit?: (event: CacheEvent) => void;
  /**
   * Called for each request that could have been answered from the cache and was not (it runs,
   * and its answer is stored if it has no errors). Requests without usable credentials are
   * neither hits nor misses: they never touch the cache.
   */
  readonly onCacheMiss?: (event: CacheEvent) => void;
}

export interface ResponseCache {
  readonly store: CacheStore;
  /** The yoga plugin; createGateway puts it right after persisted operations. */
  readonly plugin: Plugin;
  /** Resolves true once the store can be used (at once for memory), false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean>;
  /** Closes the Redis connection, if any. */
  close(): Promise<void>;
}

/** Every key this gateway writes to Redis starts with this, so it can share a Redis. */
export const CACHE_KEY_PREFIX = 'sms-gateway:response-cache:v1:';

/** Answers kept in memory at most; the least recently used go first. */
const MEMORY_MAX_ENTRIES = 1000;
/** A Redis command slower than this counts as failed: the request is answered without the cache. */
const REDIS_COMMAND_TIMEOUT_MS = 500;
const SERVED_FROM_CACHE = Symbol.for('servedFromResponseCache');

/**
 * The cache for `settings`, or null when it is off (CACHE_TTL_MS unset or 0). With a Redis URL
 * the settings must carry the HMAC key (loadConfig ensures it).
 */
export function createResponseCache(
  settings: ResponseCacheSettings,
  options: ResponseCacheOptions,
): ResponseCache | null {
  if (settings.ttlMs <= 0) return null;
  const fingerprint = credentialFingerprinter(settings.hmacKey);
  const store: CacheStore = settings.redisUrl ? 'redis' : 'memory';
  const redis = settings.redisUrl ? connectRedis(settings.redisUrl, options.logger) : null;
  const cache = redis ? resilientCache(createRedisCache({ redis: redis.client }), redis) : null;

  const fingerprintOf = (request: Request): string | null => {
    // The plugin answers a conditional request 304 when the key it names is cached, before any
    // credentials are read: a browser shared by two accounts would show one the other's answer.
    // We send no ETag (see onResponse), so conditional requests simply bypass the cache.
    if (request.headers.has('if-none-match')) return null;
    return fingerprint(request.headers);
  };

  const responseCache = useResponseCache({
    ttl: settings.ttlMs,
    cache: cache ?? entityFree(createInMemoryCache({ max: MEMORY_MAX_ENTRIES })),
    // Without usable credentials a request is not cached at all: the plugin would take a null
    // session for a public answer, shared by everyone.
    enabled: (request) => fingerprintOf(request) !== null,
    session: (request) => fingerprintOf(request),
    buildResponseCacheKey: ({ sessionId, documentString, operationName, variableValues }) =>
      `${CACHE_KEY_PREFIX}${sessionId ?? 'none'}:${operationHash(documentString, operationName, variableValues)}`,
    // Answers with any error (UNAUTHENTICATED, UPSTREAM_*, BAD_USER_INPUT, ...) are never stored.
    shouldCacheResult: ({ result }) => !result.errors?.length,
    // Schema introspection needs no account and changes with deployments: never cached.
    ttlPerSchemaCoordinate: { 'Query.__schema': 0, 'Query.__type': 0 },
    // The schema is read-only, so there is nothing to invalidate by entity (see entityFree).
    invalidateViaMutation: false,
    idFields: [],
    includeExtensionMetadata: false,
  });

  // A hit short-cuts the request before its context exists: remember the operation's name here.
  const operationNames = new WeakMap<Request, string | null>();
  const plugin: Plugin = {
    onPluginInit({ addPlugin }) {
      addPlugin(responseCache);
    },
    onParams({ request, params }) {
      operationNames.set(request, params.operationName ?? null);
    },
    onExecutionResult({ request, result }) {
      if (fingerprintOf(request) === null) return;
      const event: CacheEvent = { store, operationName: operationNames.get(request) ?? null };
      const hit = typeof result === 'object' && result !== null && SERVED_FROM_CACHE in result;
      const hook = hit ? options.onCacheHit : options.onCacheMiss;
      try {
        hook?.(event);
      } catch (error) {
        // A failing metrics hook must not fail the answer it is counting.
        if (options.logger) options.logger.warn({ err: error }, 'Response cache hook failed');
      }
    },
    onResponse({ response }) {
      // The plugin's ETag is the cache key and invites the 304 path refused in fingerprintOf.
      response.headers.delete('etag');
      response.headers.delete('last-modified');
    },
  };

  return {
    store,
    plugin,
    ready: (timeoutMs) => (redis ? redis.ready(timeoutMs) : Promise.resolve(true)),
    close: () => (redis ? redis.close() : Promise.resolve()),
  };
}

/**
 * HMAC-SHA256 of the request's credentials, hex: the same for both header styles, different for
 * any other sys_id or auth_token, and useless without the key (a plain hash of a short token
 * could be brute-forced from a Redis dump). The key is random per process unless given, which
 * is enough for the in-memory store; copies sharing Redis need the same CACHE_HMAC_KEY.
 */
export function credentialFingerprinter(
  hmacKey: string | null,
): (headers: Headers) => string | null {
  const key = hmacKey ?? randomBytes(32);
  return (headers) => {
    const read = readCredentials(headers);
    if (read.kind !== 'present') return null;
    const { sysId, authToken } = read.credentials;
    // JSON keeps the two parts apart: ("a:b", "c") and ("a", "b:c") are different accounts.
    return createHmac('sha256', key)
      .update(JSON.stringify([sysId, authToken]))
      .digest('hex');
  };
}

function operationHash(
  documentString: string,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): string {
  return createHash('sha256')
    .update(JSON.stringify([documentString, operationName ?? null, canonical(variables ?? {})]))
    .digest('hex');
}

/** Objects with sorted keys, so `{a, b}` and `{b, a}` make the same key. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

/**
 * Drops the entity records the plugin collects for invalidation. With Redis they would become
 * one set per type (and per id) with no expiry, growing for ever and shared by every account;
 * this schema has no mutations, so they would never be used.
 */
function entityFree(cache: Cache): Cache {
  return {
    get: (key) => cache.get(key),
    set: (key, result, _entities, ttl) => cache.set(key, result, [], ttl),
    invalidate: () => undefined,
  };
}

interface RedisConnection {
  readonly client: Redis;
  /** Logs the first failure after a success, so an outage is one line, not one per request. */
  failed(what: string, error: unknown): void;
  succeeded(): void;
  ready(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Redis trouble costs a cache miss, never a failed request or an unhandled rejection. */
function resilientCache(redisCache: Cache, redis: RedisConnection): Cache {
  const inner = entityFree(redisCache);
  return {
    get: async (key) => {
      try {
        const cached = await inner.get(key);
        redis.succeeded();
        return cached;
      } catch (error) {
        redis.failed('read', error);
        return undefined;
      }
    },
    set: async (key, result, entities, ttl) => {
      try {
        // No success mark here: a pipeline resolves even when its commands failed.
        await inner.set(key, result, entities, ttl);
      } catch (error) {
        redis.failed('write', error);
      }
    },
    invalidate: () => undefined,
  };
}

function connectRedis(url: URL, logger: Logger | false): RedisConnection {
  // The URL may carry a password: only its host and port are ever logged.
  const where = { redis: `${url.hostname}:${url.port || '6379'}` };
  const client = new Redis(url.href, {
    // While disconnected, commands fail at once instead of queueing behind the reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
  });
  let healthy = true;
  let closing = false;
  const failed = (what: string, error: unknown): void => {
    if (!healthy || closing) return;
    healthy = false;
    const message = error instanceof Error ? error.message : String(error);
    if (logger)
      logger.warn(
        { ...where, what },
        `Response cache unavailable, answering without it: ${message}`,
      );
  };
  const succeeded = (): void => {
    if (!healthy && logger) logger.info(where, 'Response cache: Redis reachable again');
    healthy = true;
  };
  client.on('error', (error: unknown) => failed('connection', error));
  client.on('ready', succeeded);
  return {
    client,
    failed,
    succeeded,
    ready(timeoutMs) {
      if (client.status === 'ready') return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (value: boolean): void => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(value);
        };
        const onReady = (): void => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        client.on('ready', onReady);
      });
    },
    async close() {
      closing = true;
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}
