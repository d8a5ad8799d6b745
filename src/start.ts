/**
 * Starts what a Config turns on (the simulator in demo mode, tracing, Redis, the response cache,
 * the shared APQ store, the live bus, the allow-list), wires the app with src/app.ts, and listens.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { PersistedPlugin } from './http/plugins/allow-list.js';
import type { Config } from './config/config.js';
import type { ResponseCache } from './cache/response-cache.js';
import { assembleApp, type App, type AppParts } from './app.js';
import { LocalBus, type LiveBus } from './live/bus.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics, type GatewayMetrics } from './observability/metrics.js';
import { gatewayBuild } from './observability/version.js';
import type { RedisConnection, RedisUse } from './redis/connection.js';
import { credentialMemory, type CredentialMemory } from './traffic/verification.js';

/** Starts the optional parts the Config asks for, then wires the app. */
export async function createApp(
  config: Config,
  given: Pick<AppParts, 'logger'> = {},
): Promise<App> {
  const logger = given.logger ?? createLogger(config.logLevel, undefined, config.instanceId);
  const identity = { instanceId: config.instanceId, ...gatewayBuild() };
  const { persistedOperationsPath: allowList, tracingEndpoint } = config;
  const persistedOperations = allowList ? await loadAllowList(allowList) : null;
  const metrics = config.metrics ? createMetrics(identity) : null;
  // One memory of credential verdicts, for the traffic layer and the response cache alike.
  const credentials = credentialMemory(config);
  const tracing = tracingEndpoint
    ? (await import('./observability/tracing.js')).startTracing(tracingEndpoint, identity)
    : null;
  const demo = config.upstream.url === null ? await import('./simulator/index.js') : null;
  const simulator = demo
    ? await demo.startSimulator({
        latencyMs: config.simulatorLatencyMs,
        arrivalsEveryMs: config.simulatorArrivalsMs,
        historyEnd: config.simulatorHistoryEnd,
      })
    : null;
  const redis = await connectRedisUses(config, logger, !persistedOperations);
  // With REDIS_URL, APQ hashes are shared by every copy, their texts sealed with the one secret.
  const apqStore = redis.apq
    ? (await import('./cache/apq-store.js')).createRedisApqStore(redis.apq, {
        secret: config.secret,
        logger,
      })
    : null;
  const responseCache = await startResponseCache(config, logger, metrics, credentials, redis.cache);
  const liveBus = await createLiveBus(config, redis.live, logger);
  return assembleApp(config, {
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

/** How long start-up waits for Redis: the first requests share a reachable one; else degraded. */
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
  const { connectRedis } = await import('./redis/connection.js');
  if (config.responseCache.ttlMs > 0) uses.cache = connectRedis(target, 'cache', { logger });
  if (apqOn) uses.apq = connectRedis(target, 'apq', { logger });
  if (config.live.pollMs > 0) uses.live = connectRedis(target, 'live', { logger });
  await Promise.all(Object.values(uses).map((use) => use.ready(REDIS_START_WAIT_MS)));
  return uses;
}

async function loadAllowList(path: string): Promise<PersistedPlugin> {
  const { allowListPlugin, readPersistedOperations } = await import('./http/plugins/allow-list.js');
  return allowListPlugin(readPersistedOperations(path));
}

/** The response cache, when CACHE_TTL_MS > 0: its module is imported only then. */
async function startResponseCache(
  config: Config,
  logger: Logger | false,
  metrics: GatewayMetrics | null,
  credentials: CredentialMemory,
  redis: RedisConnection | undefined,
): Promise<ResponseCache | null> {
  if (config.responseCache.ttlMs <= 0) return null;
  const { createResponseCache } = await import('./cache/response-cache.js');
  // The cache's fingerprints are keyed by the gateway's one secret. Redis being down costs cache
  // misses, not the gateway.
  const settings = { ...config.responseCache, hmacKey: config.secret.current };
  return createResponseCache(settings, {
    logger,
    credentials,
    redis,
    onCacheHit: metrics ? () => metrics.cacheLookup('hit') : undefined,
    onCacheMiss: metrics ? () => metrics.cacheLookup('miss') : undefined,
    onStaleServed: metrics ? ({ code }) => metrics.staleServed(code) : undefined,
  });
}

/** Where live events travel: this process alone, or with REDIS_URL every copy, sharing polls. */
async function createLiveBus(
  config: Config,
  connection: RedisConnection | undefined,
  logger: Logger | false,
): Promise<LiveBus> {
  if (!connection || config.live.pollMs <= 0) return new LocalBus();
  const { RedisBus } = await import('./live/redis-bus.js');
  // The poll lock lapses 1.5 intervals after its holder's last renewal: a takeover within 2 polls.
  return new RedisBus({
    connection,
    secret: config.secret,
    lockTtlMs: 1.5 * config.live.pollMs,
    logger,
  });
}

/**
 * Listens on config.port/config.host (0 = any free port). While listening, a failure (a port in
 * use) goes to the caller alone: graphql-ws would print the HTTP server's error with a stack.
 */
export async function listen(app: App): Promise<AddressInfo> {
  const { server, config } = app;
  const others = server.listeners('error') as Array<(error: Error) => void>;
  server.removeAllListeners('error');
  try {
    server.listen(config.port, config.host);
    await once(server, 'listening');
  } finally {
    for (const listener of others) server.on('error', listener);
  }
  const address = server.address() as AddressInfo;
  ringDemoDoorbells(app, address);
  return address;
}

/**
 * Demo mode plays the operator: every simulated number's webhook is set to its doorbell URL on
 * this copy, so an arriving message rings (docs/live-updates.md "The doorbell").
 */
function ringDemoDoorbells(app: App, address: AddressInfo): void {
  const doorbell = app.live?.doorbell;
  if (!app.simulator || !doorbell) return;
  const any = address.address === '0.0.0.0' || address.address === '::';
  const host = any
    ? '127.0.0.1'
    : address.family === 'IPv6'
      ? `[${address.address}]`
      : address.address;
  const origin = `http://${host}:${address.port}`;
  doorbell.listeningAt(origin);
  app.simulator.setWebhooks((tid) => `${origin}${doorbell.pathOf(tid)}`);
}
