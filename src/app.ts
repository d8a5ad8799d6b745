/**
 * The composition root: wires the gateway from a Config and parts already made, once, starting
 * nothing (no listening, no connection, no process). `src/start.ts` makes the optional parts a
 * Config turns on; `src/main.ts` runs the process's life. Tests and benches wire with it too, so
 * a part wired here is wired everywhere.
 */
import type { Plugin } from 'graphql-yoga';
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
import { createGateway, GRAPHQL_PATH } from './http/server.js';
import { readinessReport } from './http/readiness.js';
import { PROBE_PATHS } from './http/paths.js';
import { LocalBus, type LiveBus } from './live/bus.js';
import { LiveHub, type LiveHubOptions } from './live/hub.js';
import { attachWebSocket, type AttachedWebSocket } from './http/websocket.js';
import type { Logger } from './observability/logger.js';
import { warningRollup } from './observability/warning-rollup.js';
import type { GatewayMetrics } from './observability/metrics.js';
import type { Tracing } from './observability/tracing.js';
import { webSocketLog } from './observability/connection-log.js';
import type { RedisConnection, RedisUse } from './redis/connection.js';
import type { RunningSimulator } from './simulator/index.js';
import { createUpstream } from './upstream/index.js';
import type { TrafficOptions } from './traffic/traffic.js';
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
  /** The memory of credential verdicts, shared with the response cache. @default credentialMemory(config) */
  readonly credentials?: CredentialMemory;
  /** Redis connections per use (src/redis), reported in sms_redis_up and on /readiness. */
  readonly redis?: Partial<Readonly<Record<RedisUse, RedisConnection>>>;
}

/** The wired gateway: its parts, and the steps main.ts runs its life with. */
export type App = ReturnType<typeof assembleApp>;

/** Wires ready parts together. Everything the gateway is made of is connected here, once. */
export function assembleApp(config: Config, parts: AppParts = {}) {
  const logger = parts.logger ?? false;
  // One rollup of upstream warnings: the requests' failures and the traffic layer's retries.
  const warnings = logger ? warningRollup(logger) : null;
  const metrics = parts.metrics ?? null;
  const simulator = parts.simulator ?? null;
  const upstreamUrl = config.upstream.url ?? (simulator ? new URL(simulator.url) : null);
  if (upstreamUrl === null) throw new Error('assembleApp: no UPSTREAM_URL and no simulator');

  // One memory of credential verdicts, shared by the traffic layer and the response cache.
  // (A test's ready-made response cache brings the one it records into.)
  const credentials =
    parts.credentials ?? parts.responseCache?.credentials ?? credentialMemory(config);
  const loopLoad = parts.loopLoad ?? processLoop();
  const admission = new Admission({
    ...config.admission,
    load: loopLoad,
    ...(metrics ? { onRefused: (kind: TenantKind) => metrics.admissionRefused(kind) } : {}),
  });
  // Calls to the service are work too: each is charged to the tenant it was made for.
  const callsTenant = credentialsTenant(credentials);
  const { client, pool } = createUpstream(upstreamUrl, config.upstream, {
    credentials,
    onAttempt: (made) => admission.chargeWork(callsTenant(made), UNITS_PER_CALL),
    // One ledger: waiting calls go by what their account used lately, as requests do.
    usage: (flow) => admission.useOf(flow),
    ...(logger ? { logger } : {}),
    ...(warnings ? { warnings } : {}),
    ...(metrics ? { observer: metrics.upstream } : {}),
    ...(parts.traffic ? { traffic: parts.traffic } : {}),
  });

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

  const held = new HeldStreams(config.live.maxConnections, config.live.maxPerAccount);
  const responseCache = parts.responseCache ?? null;
  const redis = parts.redis ?? {};
  metrics?.watch({
    admission: () => ({
      waiting: admission.waiting,
      seats: admission.seats,
      utilization: loopLoad.utilization,
    }),
    breaker: () => client.breakerState(),
    concurrency: () => client.concurrency(),
    accounts: () => client.accountStates(),
    ...(live ? { live: () => live.stats } : {}),
    ...(responseCache ? { cacheBytes: () => responseCache.bytes() } : {}),
    redis: Object.fromEntries(Object.entries(redis).map(([use, c]) => [use, () => c.up])),
  });
  const gateway = createGateway({
    client,
    limits: config.limits,
    logger,
    warnings,
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
    readiness: readinessReport({
      draining: () => connections.draining,
      instanceId: config.instanceId,
      simulator: simulator !== null,
      redis,
    }),
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
    admitRequests(gateway, admission, credentials.identities, tenantOf, {
      graphql: GRAPHQL_PATH,
      probes: PROBE_PATHS,
    }),
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
        admit: (identity) => admission.admit(tenantOf(identity)),
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
    connections,
    /** Ends live streams (SSE, WebSocket), which never end by themselves, so the server can close. */
    endStreams,
    /** Ends live streams, then closes what the app holds; once the HTTP server has closed. */
    close() {
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

/** The memory of credential verdicts, as configured. */
export function credentialMemory(config: Config): CredentialMemory {
  return new CredentialMemory({
    secret: config.secret.current,
    acceptedTtlMs: config.upstream.verifiedTtlMs,
    refusedTtlMs: config.upstream.refusedTtlMs,
  });
}
