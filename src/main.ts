/**
 * The only file that listens: config -> (built-in simulator) -> upstream pool -> gateway ->
 * HTTP server. Drains and closes everything on SIGTERM/SIGINT.
 *
 * What is off by default (tracing, the response cache, Redis, the allow-list, the simulator
 * when UPSTREAM_URL is set) is imported only when its setting is present: each costs start-up
 * time and memory (docs/performance.md has the figures).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResponseCache } from './cache.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createGateway, GRAPHQL_PATH } from './server.js';
import { createLogger, flushLogs, type Logger } from './logger.js';
import { createMetrics, type GatewayMetrics } from './metrics.js';
import { banner, DEMO_AUTHORIZATION } from './banner.js';
import type { RunningSimulator } from './simulator/index.js';
import type { RedisApqStore } from './apq-store.js';
import { createUpstream } from './upstream/index.js';
import { LocalBus, type LiveBus } from './live/bus.js';
import { LiveHub } from './live/hub.js';
import { attachWebSocket } from './live/websocket.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const persistedOperations = config.persistedOperationsPath
    ? await loadAllowList(config.persistedOperationsPath)
    : null;
  const metrics = config.metrics ? createMetrics() : null;
  const tracing = config.tracingEndpoint
    ? (await import('./tracing.js')).startTracing(config.tracingEndpoint)
    : null;
  let simulator: RunningSimulator | null = null;
  let upstreamUrl = config.upstream.url;
  if (upstreamUrl === null) {
    const { startSimulator } = await import('./simulator/index.js');
    simulator = await startSimulator({
      latencyMs: config.simulatorLatencyMs,
      arrivalsEveryMs: config.simulatorArrivalsMs,
    });
    upstreamUrl = new URL(simulator.url);
  }
  // With REDIS_URL, APQ hashes are shared by every copy (persisted operations replace APQ).
  const apqStore: RedisApqStore | null =
    config.responseCache.redisUrl && !persistedOperations
      ? (await import('./apq-store.js')).createRedisApqStore(config.responseCache.redisUrl, logger)
      : null;

  const { client, pool } = createUpstream(upstreamUrl, config.upstream, {
    logger,
    ...(metrics ? { observer: metrics.upstream } : {}),
  });
  metrics?.watchBreaker(() => client.breakerState());
  metrics?.watchConcurrency(() => client.concurrency());

  const responseCache = await startResponseCache(config, logger, metrics);

  const live =
    config.live.pollMs > 0
      ? new LiveHub({
          client,
          bus: await liveBus(config, logger),
          pollMs: config.live.pollMs,
          maxPerAccount: config.live.maxPerAccount,
          hmacKey: config.responseCache.hmacKey,
          logger,
        })
      : null;

  if (live) metrics?.watchLive(() => live.stats);

  let draining = false;
  const gateway = createGateway({
    client,
    limits: config.limits,
    logger,
    metrics,
    metricsEndpoint: config.metricsPort === null,
    persistedOperations,
    apqStore,
    corsOrigins: config.corsOrigins,
    allowLoopbackOrigins: simulator !== null,
    tracing,
    responseCache,
    // GraphiQL pre-fills the demo credentials only when they are the simulator's, never real ones.
    graphiqlHeaders: simulator ? { Authorization: DEMO_AUTHORIZATION } : {},
    isReady: () => !draining,
    live,
    // Copies behind one load balancer must share it, or a page cursor fails on another copy.
    cursorKey: config.responseCache.hmacKey,
  });
  const server = createServer(gateway);
  const webSocket = live
    ? attachWebSocket(server, gateway, {
        path: GRAPHQL_PATH,
        maxPerConnection: config.live.maxPerConnection,
      })
    : null;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });

  const metricsServer =
    metrics && config.metricsPort !== null
      ? await listenForMetrics(metrics, config.metricsPort, config.host)
      : null;

  const { port } = server.address() as AddressInfo;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const endpoint = `http://${shownHost}:${port}${GRAPHQL_PATH}`;
  // The human lines go to stderr: stdout carries only JSON log lines, for log shippers.
  console.error(
    banner(endpoint, simulator ? { simulatorUrl: simulator.url } : { origin: upstreamUrl.origin }),
  );
  logger.info({ endpoint, upstream: upstreamUrl.origin }, 'listening');
  if (responseCache) {
    const { ttlMs, redisUrl } = config.responseCache;
    const where = redisUrl ? `Redis at ${redisUrl.host}` : 'memory';
    const { staleIfErrorMs } = config.responseCache;
    const stale = staleIfErrorMs > 0 ? `, served stale up to ${staleIfErrorMs} ms more` : '';
    console.error(`Response cache: on, in ${where}, answers kept ${ttlMs} ms${stale}`);
  }
  if (metricsServer) {
    const metricsPort = (metricsServer.address() as AddressInfo).port;
    console.error(`Metrics: http://${shownHost}:${metricsPort}/metrics`);
  }

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    draining = true;
    logger.info({ signal }, 'draining and shutting down');
    const force = setTimeout(() => {
      console.error(`Shutdown took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
      flushLogs();
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    // Live streams never end by themselves: end them, so the server can close.
    const liveClosed = live?.close();
    const webSocketClosed = webSocket?.close();
    metricsServer?.close();
    // A keep-alive connection whose request finishes while draining would otherwise stay open
    // until the client drops it, holding the exit back: close each one as soon as it is idle.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      void Promise.allSettled([
        pool.close(),
        simulator?.close(),
        tracing?.shutdown(),
        responseCache?.close(),
        apqStore?.close(),
        // Their Redis connections are quit before exit, not cut.
        liveClosed,
        webSocketClosed,
      ]).then(() => {
        clearTimeout(force);
        flushLogs();
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

async function loadAllowList(path: string) {
  const { allowListPlugin, readPersistedOperations } = await import('./plugins/allow-list.js');
  return allowListPlugin(readPersistedOperations(path));
}

/** The response cache, when CACHE_TTL_MS > 0: src/cache.ts is imported only then. */
async function startResponseCache(
  config: Config,
  logger: Logger,
  metrics: GatewayMetrics | null,
): Promise<ResponseCache | null> {
  if (config.responseCache.ttlMs <= 0) return null;
  const { createResponseCache } = await import('./cache.js');
  const responseCache = createResponseCache(config.responseCache, {
    logger,
    ...(metrics
      ? {
          onCacheHit: () => metrics.cacheLookup('hit'),
          onCacheMiss: () => metrics.cacheLookup('miss'),
          onStaleServed: ({ code }) => metrics.staleServed(code),
        }
      : {}),
  });
  // Redis being down costs cache misses, not the gateway: say so, and start anyway.
  if (responseCache && !(await responseCache.ready(5_000))) {
    logger.warn('Response cache: Redis not reachable yet; answering without the cache meanwhile');
  }
  return responseCache;
}

async function listenForMetrics(
  metrics: GatewayMetrics,
  port: number,
  host: string,
): Promise<Server> {
  const { createMetricsServer } = await import('./metrics-server.js');
  const server = createMetricsServer(metrics.registry);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}

main().catch((error: unknown) => {
  // Configuration problems already say what to fix; anything else gets a short preface.
  const known =
    error instanceof ConfigError ||
    (error instanceof Error && error.name === 'PersistedOperationsError');
  console.error(
    known
      ? error.message
      : `The gateway failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  flushLogs();
  process.exit(1);
});

/**
 * Where live events travel: this process alone, or with REDIS_URL every copy on that Redis,
 * sharing the polls (loaded only then, like the Redis client it brings).
 */
async function liveBus(config: Config, logger: Logger): Promise<LiveBus> {
  const { redisUrl } = config.responseCache;
  if (!redisUrl) return new LocalBus();
  const { RedisBus } = await import('./live/redis-bus.js');
  // A copy that goes away is replaced after a few missed polls, never less than a second.
  return new RedisBus({
    url: redisUrl,
    lockTtlMs: Math.max(3 * config.live.pollMs, 1_000),
    logger,
  });
}
