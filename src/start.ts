/**
 * Starts what a Config turns on (the simulator in demo mode, tracing, Redis connections, the
 * response cache, the shared APQ store, the live bus, the allow-list), then wires the app with
 * src/app.ts; and listens. main.ts and the tests that need the real optional parts call it.
 */
import type { AddressInfo } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import type { APQStore } from '@graphql-yoga/plugin-apq';
import type { Config } from './config/config.js';
import type { ResponseCache } from './cache/response-cache.js';
import { assembleApp, type App, type AppParts } from './app.js';
import { LocalBus, type LiveBus } from './live/bus.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics, type GatewayMetrics } from './observability/metrics.js';
import { gatewayVersion } from './observability/version.js';
import type { RedisConnection, RedisUse } from './redis/connection.js';
import { credentialMemory, type CredentialMemory } from './traffic/verification.js';

/** Starts the optional parts the Config asks for, then wires the app. */
export async function createApp(config: Config, given: AppParts = {}): Promise<App> {
  const logger = given.logger ?? createLogger(config.logLevel, undefined, config.instanceId);
  const identity = { instanceId: config.instanceId, version: gatewayVersion() };
  const persistedOperations =
    given.persistedOperations !== undefined
      ? given.persistedOperations
      : config.persistedOperationsPath
        ? await loadAllowList(config.persistedOperationsPath)
        : null;
  const metrics =
    given.metrics !== undefined ? given.metrics : config.metrics ? createMetrics(identity) : null;
  // One memory of credential verdicts, for the traffic layer and the response cache alike.
  const credentials = given.credentials ?? credentialMemory(config);
  const tracing =
    given.tracing !== undefined
      ? given.tracing
      : config.tracingEndpoint
        ? (await import('./observability/tracing.js')).startTracing(
            config.tracingEndpoint,
            identity,
          )
        : null;
  const simulator =
    given.simulator !== undefined
      ? given.simulator
      : config.upstream.url === null
        ? await (
            await import('./simulator/index.js')
          ).startSimulator({
            latencyMs: config.simulatorLatencyMs,
            arrivalsEveryMs: config.simulatorArrivalsMs,
            historyEnd: config.simulatorHistoryEnd,
          })
        : null;
  const redis = given.redis ?? (await connectRedisUses(config, logger, !persistedOperations));
  // With REDIS_URL, APQ hashes are shared by every copy (persisted operations replace APQ).
  const apqStore: APQStore | null =
    given.apqStore !== undefined
      ? given.apqStore
      : redis.apq
        ? (await import('./cache/apq-store.js')).createRedisApqStore(redis.apq, {
            // Query texts are sealed with the gateway's one secret, as cached answers are.
            secret: config.secret,
            logger,
          })
        : null;
  const responseCache =
    given.responseCache !== undefined
      ? given.responseCache
      : await startResponseCache(config, { logger, metrics, credentials, redis: redis.cache });
  const liveBus = given.liveBus ?? (await createLiveBus(config, redis.live, logger));
  return assembleApp(config, {
    ...given,
    logger,
    metrics,
    tracing,
    persistedOperations,
    apqStore,
    responseCache,
    liveBus,
    simulator,
    redis,
    credentials,
  });
}

/**
 * How long start-up waits for Redis: enough for a reachable one to connect, so the first requests
 * already share the cache; an unreachable one costs no more than this (the copy then serves
 * degraded, says so on /readiness and in sms_redis_up, and reconnects in the background).
 */
const REDIS_START_WAIT_MS = 300;

/** One connection per use of Redis the Config turns on (src/redis), opened together. */
async function connectRedisUses(
  config: Config,
  logger: Logger | false,
  apqOn: boolean,
): Promise<Partial<Record<RedisUse, RedisConnection>>> {
  if (config.redis === null) return {};
  const target = config.redis;
  const uses: Partial<Record<RedisUse, RedisConnection>> = {};
  if (config.responseCache.ttlMs > 0) {
    uses.cache = (await import('./cache/redis-store.js')).connectRedis(target, logger);
  }
  if (apqOn) uses.apq = (await import('./cache/apq-store.js')).connectApqRedis(target, logger);
  if (config.live.pollMs > 0) {
    const { connectRedis } = await import('./redis/connection.js');
    uses.live = connectRedis(target, 'live', {
      logger,
      commandTimeoutMs: 1_000,
      messages: {
        down: 'live updates: Redis unavailable, polls wait for it',
        up: 'live updates: Redis reachable again',
      },
    });
  }
  await Promise.all(Object.values(uses).map((use) => use.ready(REDIS_START_WAIT_MS)));
  return uses;
}

async function loadAllowList(path: string): Promise<Plugin> {
  const { allowListPlugin, readPersistedOperations } = await import('./http/plugins/allow-list.js');
  return allowListPlugin(readPersistedOperations(path));
}

/** The response cache, when CACHE_TTL_MS > 0: its module is imported only then. */
async function startResponseCache(
  config: Config,
  with_: {
    logger: Logger | false;
    metrics: GatewayMetrics | null;
    credentials: CredentialMemory;
    redis: RedisConnection | undefined;
  },
): Promise<ResponseCache | null> {
  const { logger, metrics, credentials, redis } = with_;
  if (config.responseCache.ttlMs <= 0) return null;
  const { createResponseCache } = await import('./cache/response-cache.js');
  // The cache's fingerprints are keyed by the gateway's one secret.
  const settings = { ...config.responseCache, hmacKey: config.secret.current };
  const responseCache = createResponseCache(settings, {
    logger,
    credentials,
    ...(metrics
      ? {
          onCacheHit: () => metrics.cacheLookup('hit'),
          onCacheMiss: () => metrics.cacheLookup('miss'),
          onStaleServed: ({ code }: { code: string }) => metrics.staleServed(code),
        }
      : {}),
    ...(redis ? { redis } : {}),
  });
  // Redis being down costs cache misses, not the gateway: its connection has said so already.
  return responseCache;
}

/**
 * Where live events travel: this process alone, or with REDIS_URL every copy on that Redis,
 * sharing the polls (loaded only then, like the Redis client it brings).
 */
async function createLiveBus(
  config: Config,
  connection: RedisConnection | undefined,
  logger: Logger | false,
): Promise<LiveBus> {
  if (!connection || config.live.pollMs <= 0) return new LocalBus();
  const { RedisBus } = await import('./live/redis-bus.js');
  // Renewed every poll; lapses 1.5 intervals after the holder's last one, and the others ask
  // four times an interval: a takeover within 2 x LIVE_POLL_MS. The logger says (once) when a
  // value does not open: copies with different secrets on one Redis.
  return new RedisBus({
    connection,
    secret: config.secret,
    lockTtlMs: 1.5 * config.live.pollMs,
    logger,
  });
}

/**
 * Listens on config.port/config.host (0 = any free port). The WebSocket server re-emits the HTTP
 * server's errors, and graphql-ws prints them with a stack: while listening, a failure (a port in
 * use) goes to the caller alone, as one clear line.
 */
export function listen(app: App): Promise<AddressInfo> {
  const { server, config } = app;
  return new Promise<AddressInfo>((resolve, reject) => {
    const others = server.listeners('error') as Array<(error: Error) => void>;
    server.removeAllListeners('error');
    const restore = (): void => {
      server.off('error', fail);
      for (const listener of others) server.on('error', listener);
    };
    const fail = (error: Error): void => {
      restore();
      reject(error);
    };
    server.once('error', fail);
    server.listen(config.port, config.host, () => {
      restore();
      resolve(server.address() as AddressInfo);
    });
  });
}
