/**
 * The composition root: wires the gateway from a Config and parts already made (src/start.ts
 * makes them), starting nothing. Tests and benches wire with it too.
 */
import type { Config } from './config/config.js';
import type { RedisApqStore } from './cache/apq-store.js';
import { createGatewayServer, defaultMaxConnections } from './http/connections.js';
import type { LoopLoad } from './traffic/fair-admission.js';
import { requestAdmission } from './traffic/admitted-requests.js';
import { HeldStreams } from './traffic/held-streams.js';
import { DEMO_AUTHORIZATION } from './http/banner.js';
import { createGateway, type GatewayOptions } from './http/server.js';
import { readinessReport } from './http/readiness.js';
import { GRAPHQL_PATH, PROBE_PATHS, RING_PATH } from './http/paths.js';
import { withDoorbellRoute } from './http/doorbell-route.js';
import { LocalBus, type LiveBus } from './live/bus.js';
import { Doorbell, RING_MAX_BODY_BYTES } from './live/doorbell.js';
import { fingerprintKey } from './core/credentials.js';
import { LiveHub, type LiveHubOptions } from './live/hub.js';
import { attachWebSocket } from './http/websocket.js';
import type { Logger } from './observability/logger.js';
import { warningRollup } from './observability/warning-rollup.js';
import { webSocketLog } from './observability/connection-log.js';
import type { RedisConnection, RedisUse } from './redis/connection.js';
import type { RunningSimulator } from './simulator/index.js';
import { createUpstream, type UpstreamExtras } from './upstream/index.js';
import { credentialMemory, type CredentialMemory } from './traffic/verification.js';

/** Parts made outside (createApp in src/start.ts makes them from the Config); absent: none. */
export interface AppParts extends Pick<
  GatewayOptions,
  'metrics' | 'tracing' | 'persistedOperations' | 'apqStore' | 'responseCache' | 'graphiqlHeaders'
> {
  readonly logger?: Logger | false;
  readonly liveBus?: LiveBus;
  /** The built-in simulator standing in for UPSTREAM_URL (demo mode). */
  readonly simulator?: RunningSimulator | null;
  /** Fine-tuning of the adaptive limit (tests, bench). */
  readonly traffic?: UpstreamExtras['traffic'];
  /** Poll-loop fine-tuning beyond the Config (tests). */
  readonly liveTuning?: Pick<
    LiveHubOptions,
    'pageSize' | 'maxCatchUp' | 'failuresBeforeError' | 'queueLimit' | 'resumeLimit'
  > & { readonly safetyNetMs?: number; readonly ringGapMs?: number };
  /** How busy the event loop is, for admission. @default processLoop() */
  readonly loopLoad?: LoopLoad;
  /** Verdicts on credentials, shared with the response cache. @default credentialMemory(config) */
  readonly credentials?: CredentialMemory;
  /** Redis connections per use, reported in sms_redis_up and on /readiness. */
  readonly redis?: Partial<Readonly<Record<RedisUse, RedisConnection>>>;
}

/** The wired gateway: its parts, and the steps src/runtime.ts runs its life with. */
export type App = ReturnType<typeof assembleApp>;

export function assembleApp(config: Config, parts: AppParts = {}) {
  const logger = parts.logger ?? false;
  const warnings = logger ? warningRollup(logger) : null;
  const metrics = parts.metrics ?? null;
  const simulator = parts.simulator ?? null;
  const upstreamUrl = config.upstream.url ?? (simulator ? new URL(simulator.url) : null);
  if (upstreamUrl === null) throw new Error('assembleApp: no UPSTREAM_URL and no simulator');
  // One memory of verdicts for traffic and the response cache (a test's cache brings its own).
  const credentials =
    parts.credentials ?? parts.responseCache?.credentials ?? credentialMemory(config);
  const admission = requestAdmission(credentials, {
    ...config.admission,
    load: parts.loopLoad,
    onRefused: metrics ? (kind) => metrics.admissionRefused(kind) : undefined,
  });
  const { client, pool } = createUpstream(upstreamUrl, config.upstream, {
    credentials,
    ledger: admission.ledger,
    ...(logger ? { logger } : {}),
    ...(warnings ? { warnings } : {}),
    ...(metrics ? { observer: metrics.upstream } : {}),
    ...(parts.traffic ? { traffic: parts.traffic } : {}),
  });
  const liveBus = config.live.pollMs > 0 ? (parts.liveBus ?? new LocalBus()) : null;
  const { safetyNetMs, ringGapMs, ...liveTuning } = parts.liveTuning ?? {};
  // Rings of the numbers' webhooks: every copy hears them on the bus (docs/live-updates.md).
  const doorbell = liveBus
    ? new Doorbell({
        bus: liveBus,
        key: fingerprintKey(config.secret.current),
        previousKey: config.secret.previous,
        pathPrefix: RING_PATH,
        publicUrl: config.live.publicUrl,
        ...(safetyNetMs !== undefined ? { safetyNetMs } : {}),
        ...(ringGapMs !== undefined ? { ringGapMs } : {}),
      })
    : null;
  const live = liveBus
    ? new LiveHub({
        client,
        bus: liveBus,
        doorbell,
        pollMs: config.live.pollMs,
        maxPerAccount: config.live.maxPerAccount,
        hmacKey: config.secret.current,
        admission: {
          maxTotal: config.live.maxTotal,
          accountOf: (c) => credentials.identities.of(c).account,
          verify: (c) => client.verify(c),
        },
        ...liveTuning,
        ...(logger ? { logger } : {}),
        ...(metrics ? { observer: metrics.live } : {}),
      })
    : null;
  const held = new HeldStreams(config.live.maxConnections, config.live.maxPerAccount);
  const responseCache = parts.responseCache ?? null;
  const redis = parts.redis ?? {};
  metrics?.watch({
    admission: admission.state,
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
    // Only the simulator's demo credentials are ever pre-filled, never real ones.
    graphiqlHeaders:
      parts.graphiqlHeaders ?? (simulator ? { Authorization: DEMO_AUTHORIZATION } : {}),
    graphiql: config.graphiql,
    readiness: readinessReport({
      draining: () => connections.draining,
      instanceId: config.instanceId,
      simulator: simulator !== null,
      redis,
    }),
    live,
    eventStreams: {
      held,
      verify: (c) => client.verify(c),
      maxOperationsPerStream: config.live.maxPerConnection,
    },
    cursorKey: config.secret.current,
    previousCursorKey: config.secret.previous,
  });
  const admitted = admission.listener(gateway.listener, {
    graphql: GRAPHQL_PATH,
    probes: PROBE_PATHS,
  });
  const connections = createGatewayServer(
    doorbell
      ? withDoorbellRoute(admitted, doorbell, { maxBodyBytes: RING_MAX_BODY_BYTES })
      : admitted,
    {
      keepAliveTimeoutMs: config.shutdown.keepAliveTimeoutMs,
      maxConnections: defaultMaxConnections(config.upstream.connections),
    },
  );
  const webSocket = live
    ? attachWebSocket(connections.server, gateway, {
        path: GRAPHQL_PATH,
        maxPerConnection: config.live.maxPerConnection,
        ...(logger ? webSocketLog(logger) : {}),
        held,
        maxPayloadBytes: config.limits.maxBodyBytes,
        // Pages that may not call over HTTP may not open a WebSocket either.
        cors: { origins: config.corsOrigins, allowLoopback: simulator !== null },
        // Each connection_init takes its turn; upgrades carry no credentials, so are not admitted.
        admit: admission.admit,
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
    server: connections.server,
    connections,
    /** Ends live streams (SSE, WebSocket), which never end by themselves, so the server can close. */
    endStreams,
    /** Ends live streams, then closes what the app holds; once the HTTP server has closed. */
    close: (): Promise<void> =>
      (closed ??= (async () => {
        await endStreams();
        await Promise.allSettled([
          pool.close(),
          doorbell?.close(),
          simulator?.close(),
          parts.tracing?.shutdown(),
          responseCache?.close(),
          (parts.apqStore as RedisApqStore | null | undefined)?.close?.(),
        ]);
        // Each use closes its own; this is for uses given without their owner (idempotent).
        await Promise.allSettled(Object.values(redis).map((connection) => connection.close()));
      })()),
  };
}
