/**
 * The composition root: the one place that assembles the gateway from a Config. `main.ts`, the
 * tests and the benches all call it, so a feature wired here is wired everywhere.
 *
 * createApp() loads what is optional (the simulator, tracing, the response cache, Redis, the
 * allow-list) only when its setting is present, then assembleApp() wires the parts. Tests that
 * inject ready-made parts call assembleApp() directly; it is synchronous.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import type { Pool } from 'undici';
import type { Config } from './config/config.js';
import type { ResponseCache } from './cache/response-cache.js';
import type { RedisApqStore } from './cache/apq-store.js';
import { createGatewayServer, defaultMaxConnections } from './http/connections.js';
import {
  Admission,
  UNITS_PER_CALL,
  type LoopLoad,
  type TenantKind,
} from './traffic/fair-admission.js';
import { admitRequests, credentialsTenant, tenantResolver } from './traffic/admitted-requests.js';
import { processLoop } from './traffic/loop-monitor.js';
import { HeldStreams } from './traffic/held-streams.js';
import { DEMO_AUTHORIZATION } from './http/banner.js';
import type { APQStore } from '@graphql-yoga/plugin-apq';
import { createGateway, GRAPHQL_PATH, type Gateway, type ReadinessReport } from './http/server.js';
import { LocalBus, type LiveBus } from './live/bus.js';
import { LiveHub, type LiveHubOptions } from './live/hub.js';
import { attachWebSocket, type AttachedWebSocket } from './http/websocket.js';
import { createLogger, type Logger } from './observability/logger.js';
import { holdingRequestWarnings } from './observability/warning-rollup.js';
import { createMetrics, type GatewayMetrics } from './observability/metrics.js';
import type { Tracing } from './observability/tracing.js';
import { gatewayVersion } from './observability/version.js';
import { webSocketLog } from './observability/connection-log.js';
import type { RedisConnection, RedisUse } from './redis/connection.js';
import type { RunningSimulator } from './simulator/index.js';
import { createUpstream } from './upstream/index.js';
import type { ManagedUpstreamClient, TrafficOptions } from './traffic/traffic.js';
import { CredentialMemory } from './traffic/verification.js';

/** Parts that createApp() loads or builds from the Config; tests may pass their own. */
export interface AppParts {
  /** Where logs go; false for none. @default createLogger(config.logLevel) */
  readonly logger?: Logger | false;
  /** @default createMetrics() when config.metrics */
  readonly metrics?: GatewayMetrics | null;
  readonly tracing?: Tracing | null;
  /** The allow-list plugin; none runs any operation and accepts APQ. */
  readonly persistedOperations?: Plugin | null;
  /** Where APQ keeps its hashes; this process's memory when none. */
  readonly apqStore?: APQStore | null;
  readonly responseCache?: ResponseCache | null;
  /** Where live events travel. @default a LocalBus */
  readonly liveBus?: LiveBus;
  /** The built-in simulator standing in for UPSTREAM_URL (demo mode). */
  readonly simulator?: RunningSimulator | null;
  /** Fine-tuning of the adaptive limit (tests, bench). */
  readonly traffic?: Pick<TrafficOptions, 'initialConcurrency' | 'minConcurrency'>;
  /** Poll-loop fine-tuning beyond the Config (tests). */
  readonly liveTuning?: Pick<
    LiveHubOptions,
    'pageSize' | 'maxCatchUp' | 'failuresBeforeError' | 'queueLimit' | 'resumeLimit'
  >;
  /** Headers GraphiQL pre-fills. @default the demo credentials in demo mode, none otherwise */
  readonly graphiqlHeaders?: Readonly<Record<string, string>>;
  /** How busy the event loop is, for admission. @default the process's sampler (tests: their own) */
  readonly loopLoad?: LoopLoad;
  /** Redis connections per use (src/redis), reported in sms_redis_up and on /readiness. */
  readonly redis?: Partial<Readonly<Record<RedisUse, RedisConnection>>>;
}

export interface App {
  readonly config: Config;
  readonly gateway: Gateway;
  readonly client: ManagedUpstreamClient;
  readonly pool: Pool;
  readonly live: LiveHub | null;
  readonly metrics: GatewayMetrics | null;
  readonly logger: Logger | false;
  /** The service's base URL in use (the simulator's in demo mode). */
  readonly upstreamUrl: URL;
  readonly simulator: RunningSimulator | null;
  readonly responseCache: ResponseCache | null;
  /** The HTTP server with the gateway (and the WebSocket endpoint when live is on); not listening. */
  readonly server: Server;
  /** False once draining has begun: /readiness answers 503. */
  readonly ready: boolean;
  /** What /readiness answers: ready or draining, and each Redis use up or down. */
  readiness(): ReadinessReport;
  /**
   * Starts draining while still serving: /readiness answers 503, and every response closes its
   * connection once sent, so clients and balancers move to other copies.
   */
  drain(): void;
  /**
   * Stops listening, answering the requests held for that moment, and closes the connections idle
   * since the drain began (src/http/connections.ts). End live streams after it: the held
   * requests may have opened some.
   */
  stopListening(): Promise<void>;
  /** Resolves once every connection has ended: busy ones after their response. */
  allClosed(): Promise<void>;
  /** The shutdown deadline's last resort: closes idle connections; returns requests still running. */
  closeRemaining(): number;
  /** Listens on config.port/config.host (0 = any free port). */
  listen(): Promise<AddressInfo>;
  /** Ends live streams (SSE and WebSocket), which never end by themselves, so the server can close. */
  endStreams(): Promise<void>;
  /**
   * Ends live streams, then closes everything the app opened (pool, Redis, simulator, exporters).
   * Call it once the HTTP server has closed: requests still in flight need the pool.
   */
  close(): Promise<void>;
}

/** Loads the optional subsystems the Config asks for, then assembles the app. */
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
      : await startResponseCache(config, logger, metrics, redis.cache);
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

/** Wires ready parts together. Everything the gateway is made of is connected here, once. */
export function assembleApp(config: Config, parts: AppParts = {}): App {
  const logger = parts.logger ?? false;
  const metrics = parts.metrics ?? null;
  const simulator = parts.simulator ?? null;
  const upstreamUrl = config.upstream.url ?? (simulator ? new URL(simulator.url) : null);
  if (upstreamUrl === null) throw new Error('assembleApp: no UPSTREAM_URL and no simulator');

  // One memory of credential verdicts, shared by the traffic layer and the response cache.
  const credentials = parts.responseCache?.credentials ?? credentialMemory(config);
  const loopLoad = parts.loopLoad ?? processLoop();
  const admission = new Admission({
    ...config.admission,
    load: loopLoad,
    ...(metrics ? { onRefused: (kind: TenantKind) => metrics.admissionRefused(kind) } : {}),
  });
  metrics?.watchAdmission(() => ({
    waiting: admission.waiting,
    seats: admission.seats,
    utilization: loopLoad.utilization,
  }));
  // Calls to the service are work too: each is charged to the tenant it was made for.
  const callsTenant = credentialsTenant(credentials);
  const { client, pool } = createUpstream(upstreamUrl, config.upstream, {
    credentials,
    onAttempt: (made) => admission.chargeWork(callsTenant(made), UNITS_PER_CALL),
    // One ledger: waiting calls go by what their account used lately, as requests do.
    usage: (flow) => admission.useOf(flow),
    // Its per-call warnings (retries) are rolled up with the request's other failures.
    ...(logger ? { logger: holdingRequestWarnings(logger) } : {}),
    ...(metrics ? { observer: metrics.upstream } : {}),
    ...(parts.traffic ? { traffic: parts.traffic } : {}),
  });
  metrics?.watchBreaker(() => client.breakerState());
  metrics?.watchConcurrency(() => client.concurrency());
  metrics?.watchAccounts(() => client.accountStates());

  const live =
    config.live.pollMs > 0
      ? new LiveHub({
          client,
          bus: parts.liveBus ?? new LocalBus(),
          pollMs: config.live.pollMs,
          maxPerAccount: config.live.maxPerAccount,
          hmacKey: config.secret.current,
          admission: {
            maxTotal: config.live.maxTotal,
            accountOf: (c) => credentials.account(c),
            verify: (c) => client.verify(c),
          },
          ...parts.liveTuning,
          ...(logger ? { logger } : {}),
          ...(metrics ? { observer: metrics.live } : {}),
        })
      : null;
  if (live) metrics?.watchLive(() => live.stats);

  const held = new HeldStreams(config.live.maxConnections, config.live.maxPerAccount);
  let ready = true;
  const responseCache = parts.responseCache ?? null;
  const redis = parts.redis ?? {};
  for (const [use, connection] of Object.entries(redis)) {
    metrics?.watchRedis(use, () => connection.up);
  }
  if (responseCache) metrics?.watchCacheBytes(() => responseCache.bytes());
  const readiness = (): ReadinessReport => {
    const uses = Object.entries(redis);
    return {
      ready,
      status: ready ? 'ready' : 'draining',
      instance: config.instanceId,
      // Demo mode says so wherever an operator looks (docs/configuration.md "Demo mode").
      ...(simulator ? { upstream: 'simulator' } : {}),
      ...(uses.length > 0
        ? { redis: Object.fromEntries(uses.map(([use, c]) => [use, c.up ? 'up' : 'down'])) }
        : {}),
    };
  };
  const gateway = createGateway({
    client,
    limits: config.limits,
    logger,
    metrics,
    metricsEndpoint: config.metricsPort === null,
    persistedOperations: parts.persistedOperations ?? null,
    apqStore: parts.apqStore ?? null,
    identities: credentials.identities,
    accepted: (identity) => credentials.verdictOf(identity.pair) === 'accepted',
    corsOrigins: config.corsOrigins,
    allowLoopbackOrigins: simulator !== null,
    tracing: parts.tracing ?? null,
    responseCache,
    // GraphiQL pre-fills the demo credentials only when they are the simulator's, never real ones.
    graphiqlHeaders:
      parts.graphiqlHeaders ?? (simulator ? { Authorization: DEMO_AUTHORIZATION } : {}),
    // GRAPHIQL: off by default with NODE_ENV=production, introspection with it.
    graphiql: config.graphiql,
    readiness,
    live,
    // A single-connection stream holds a slot as a WebSocket does: one cap, one share per account.
    eventStreams: {
      held,
      verify: (c) => client.verify(c),
      maxOperationsPerStream: config.live.maxPerConnection,
    },
    // GATEWAY_SECRET: copies behind one load balancer must share it, or a page cursor fails on
    // another copy; the previous one is still accepted during a rotation.
    cursorKey: config.secret.current,
    previousCursorKey: config.secret.previous,
  });
  const tenantOf = tenantResolver(credentials);
  const connections = createGatewayServer(
    admitRequests(gateway, admission, tenantOf, GRAPHQL_PATH),
    {
      keepAliveTimeoutMs: config.shutdown.keepAliveTimeoutMs,
      maxConnections: defaultMaxConnections(config.upstream.connections),
    },
  );
  const { server } = connections;
  const webSocket: AttachedWebSocket | null = live
    ? attachWebSocket(server, gateway, {
        path: GRAPHQL_PATH,
        maxPerConnection: config.live.maxPerConnection,
        ...(logger ? webSocketLog(logger) : {}),
        held,
        maxPayloadBytes: config.limits.maxBodyBytes,
        // Pages that may not call over HTTP may not open a WebSocket either.
        cors: { origins: config.corsOrigins, allowLoopback: simulator !== null },
        // Each connection_init takes its credentials' turn, as an HTTP request would; upgrades
        // carry none (browsers send none), so they are not admitted.
        admit: (headers) => admission.admit(tenantOf(headers)),
        verify: (c) => client.verify(c),
        verdictOf: (pair) => credentials.verdictOf(pair),
        identities: credentials.identities,
      })
    : null;

  let streamsEnded: Promise<void> | null = null;
  const endStreams = (): Promise<void> =>
    (streamsEnded ??= Promise.allSettled([live?.close(), webSocket?.close()]).then(() => {}));
  let closed: Promise<void> | null = null;
  return {
    config,
    gateway,
    client,
    pool,
    live,
    metrics,
    logger,
    upstreamUrl,
    simulator,
    responseCache,
    server,
    get ready() {
      return ready;
    },
    readiness,
    drain() {
      ready = false;
      connections.closeAfterEachResponse();
    },
    stopListening: () => connections.stopListening(),
    allClosed: () => connections.allClosed(),
    closeRemaining: () => connections.closeRemaining(),
    listen: () =>
      new Promise<AddressInfo>((resolve, reject) => {
        // The WebSocket server re-emits the HTTP server's errors, and graphql-ws prints them with
        // a stack ("Internal error emitted on the WebSocket server"): while listening, a failure
        // (port in use) goes to the caller alone, as one clear line.
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
      }),
    endStreams,
    close() {
      ready = false;
      closed ??= (async () => {
        await endStreams();
        await Promise.allSettled([
          pool.close(),
          simulator?.close(),
          parts.tracing?.shutdown(),
          responseCache?.close(),
          (parts.apqStore as RedisApqStore | null | undefined)?.close?.(),
        ]);
        // Each use closes its own; this is for uses given without their owner (idempotent).
        await Promise.allSettled(Object.values(redis).map((connection) => connection.close()));
      })();
      return closed;
    },
  };
}

async function loadAllowList(path: string): Promise<Plugin> {
  const { allowListPlugin, readPersistedOperations } = await import('./http/plugins/allow-list.js');
  return allowListPlugin(readPersistedOperations(path));
}

/** The response cache, when CACHE_TTL_MS > 0: its module is imported only then. */
async function startResponseCache(
  config: Config,
  logger: Logger | false,
  metrics: GatewayMetrics | null,
  redis: RedisConnection | undefined,
): Promise<ResponseCache | null> {
  if (config.responseCache.ttlMs <= 0) return null;
  const { createResponseCache } = await import('./cache/response-cache.js');
  // The cache's fingerprints are keyed by the gateway's one secret.
  const settings = { ...config.responseCache, hmacKey: config.secret.current };
  const responseCache = createResponseCache(settings, {
    logger,
    credentials: credentialMemory(config),
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

/** The memory of credential verdicts, as configured. */
function credentialMemory(config: Config): CredentialMemory {
  return new CredentialMemory({
    secret: config.secret.current,
    acceptedTtlMs: config.upstream.verifiedTtlMs,
    refusedTtlMs: config.upstream.refusedTtlMs,
  });
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
