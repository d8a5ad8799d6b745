/** Environment -> validated, frozen configuration. Every bad value is reported, each in one line. */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import {
  FIXED_ADMISSION_MIN_SEATS,
  FIXED_ADMISSION_MAX_WAITING,
  FIXED_ADMISSION_MAX_WAIT_MS,
  FIXED_CACHE_MAX_ENTRY_BYTES,
  FIXED_CREDENTIALS_REFUSED_TTL_MS,
  FIXED_CREDENTIALS_VERIFIED_TTL_MS,
  FIXED_HEAP_GROWING_PERCENT,
  FIXED_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION,
  FIXED_MAX_DIRECTIVES,
  FIXED_MAX_NODE_IDS,
  FIXED_MAX_TOKENS,
  FIXED_MAX_UPSTREAM_CALLS,
  FIXED_SIMULATOR_HISTORY_END,
  FIXED_UPSTREAM_ACCOUNT_SHARE_PERCENT,
  FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT,
  FIXED_UPSTREAM_BREAKER_COOLDOWN_MS,
  FIXED_UPSTREAM_BREAKER_THRESHOLD,
  FIXED_UPSTREAM_RETRIES,
  FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS,
  FIXED_UPSTREAM_RETRY_BASE_MS,
  RETIRED_VARIABLES,
} from './fixed.js';
import { unknownVariables } from './unknown-variables.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * How a service reads `history_end`: `exclusive`, the position just past the last message asked
 * for, or `inclusive`, the last message's own position. The gateway's ranges are half-open
 * everywhere; src/upstream/history-end.ts translates them to the service's reading.
 */
export const HISTORY_END_READINGS = ['exclusive', 'inclusive'] as const;
export type HistoryEndReading = (typeof HISTORY_END_READINGS)[number];

/** What the query-limit plugins enforce on each document (src/http/plugins/query-limits.ts). */
export interface QueryLimits {
  /** Largest request body, in bytes. */
  readonly maxBodyBytes: number;
  /** Most lexical tokens in one document. @default FIXED_MAX_TOKENS */
  readonly maxTokens: number;
  readonly maxAliases: number;
  readonly maxDepth: number;
  /** @default FIXED_MAX_DIRECTIVES */
  readonly maxDirectives: number;
  /**
   * Most items (objects, each list at its size) an operation may return or fetch, estimated
   * before it runs from the schema's @listSize (src/graph/estimate-cost.ts). @default 100000
   */
  readonly maxCost: number;
}

/** Limits on what one GraphQL request may cost; see docs/limits.md. */
export interface GatewayLimits extends QueryLimits {
  /** Widest `history(start, end)` range accepted, as `end - start`. @default 1000 */
  readonly maxHistoryRange: number;
  /** Upstream calls one GraphQL request may make in all. @default FIXED_MAX_UPSTREAM_CALLS */
  readonly maxUpstreamCalls: number;
  /**
   * Ids one `nodes(ids:)` may name, and representations one `_entities` may carry.
   * @default FIXED_MAX_NODE_IDS
   */
  readonly maxNodeIds: number;
  /**
   * Bytes of data one answer may hold, counted while it is built (src/graph/response-budget.ts);
   * past it, further lists fail with RESPONSE_TOO_LARGE. @default 8388608 (8 MiB)
   */
  readonly maxResponseBytes: number;
}

export interface UpstreamSettings {
  /** The service's base URL; null starts the built-in simulator instead. @default null */
  readonly url: URL | null;
  /** The whole wait for one upstream answer, retries and backoff included, in ms. @default 10000 */
  readonly timeoutMs: number;
  /**
   * One attempt's own limit, so a hung attempt can be retried within timeoutMs.
   * @default timeoutMs (FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT of it)
   */
  readonly attemptTimeoutMs: number;
  /**
   * Keep-alive connections to the upstream, shared by all requests: the hard cap of calls in
   * flight, under which the adaptive limit moves. @default 128
   */
  readonly connections: number;
  /**
   * How long an account's calls pause after a 429 without a usable Retry-After, in ms.
   * @default FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS
   */
  readonly defaultRetryAfterMs: number;
  /**
   * Extra attempts after a transient failure (reset, 502/503/504, timeout).
   * @default FIXED_UPSTREAM_RETRIES
   */
  readonly retries: number;
  /**
   * First retry delay; later ones grow exponentially with jitter.
   * @default FIXED_UPSTREAM_RETRY_BASE_MS
   */
  readonly retryBaseDelayMs: number;
  /**
   * Faults in a row that open an account's breaker, or the service's on service-wide evidence.
   * @default FIXED_UPSTREAM_BREAKER_THRESHOLD
   */
  readonly breakerThreshold: number;
  /**
   * How long an open breaker fails fast before probing.
   * @default FIXED_UPSTREAM_BREAKER_COOLDOWN_MS
   */
  readonly breakerCooldownMs: number;
  /**
   * The percentage of the adaptive limit one account (sys_id) may hold in flight.
   * @default FIXED_UPSTREAM_ACCOUNT_SHARE_PERCENT
   */
  readonly accountSharePercent: number;
  /**
   * How long credentials the service accepted count as verified, in ms.
   * @default FIXED_CREDENTIALS_VERIFIED_TTL_MS
   */
  readonly verifiedTtlMs: number;
  /**
   * How long credentials the service refused are remembered as refused, in ms.
   * @default FIXED_CREDENTIALS_REFUSED_TTL_MS
   */
  readonly refusedTtlMs: number;
  /**
   * UPSTREAM_HISTORY_END: how the service reads `history_end` (`npm run doctor` finds out).
   * @default "exclusive"
   */
  readonly historyEnd: HistoryEndReading;
}

/** The opt-in response cache; see docs/cache.md. */
export interface ResponseCacheSettings {
  /** How long an answer is served from the cache, in milliseconds; 0 turns the cache off. @default 0 */
  readonly ttlMs: number;
  /** Redis shared by every gateway copy; null keeps the cache in this process's memory. @default null */
  readonly redisUrl: URL | null;
  /**
   * How long past its TTL an answer may still be served, marked stale, when the service fails;
   * 0 turns stale-if-error off. See docs/stale-if-error.md. @default 0
   */
  readonly staleIfErrorMs: number;
  /** Bytes (of answers' JSON) the in-memory store may hold, stale copies included. @default 67108864 (64 MiB) */
  readonly maxBytes: number;
  /**
   * Larger answers are not stored at all, in memory or in Redis.
   * @default FIXED_CACHE_MAX_ENTRY_BYTES
   */
  readonly maxEntryBytes: number;
}

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Where Redis is (src/redis); see docs/deploy.md "Redis topologies". */
export interface RedisSettings {
  /**
   * REDIS_URL, redis:// or rediss://: user, password, TLS and database for every topology; the
   * server itself with neither sentinels nor cluster nodes, one more seed node in cluster mode.
   */
  readonly url: URL;
  /** REDIS_SENTINELS: sentinels to ask for the primary, as host:port,host:port. @default [] */
  readonly sentinels: readonly HostPort[];
  /** REDIS_SENTINEL_NAME: the primary's name at the sentinels. @default "mymaster" with sentinels */
  readonly sentinelName: string | null;
  /** REDIS_SENTINEL_PASSWORD: the sentinels' own password; null asks them without one. @default null */
  readonly sentinelPassword: string | null;
  /** REDIS_CLUSTER_NODES: seed nodes of a Redis Cluster, host:port,host:port. @default [] */
  readonly clusterNodes: readonly HostPort[];
}

/** The fair queue in front of every request (src/traffic/fair-admission.ts); see docs/limits.md. */
export interface AdmissionSettings {
  /**
   * The fewest requests that run while the event loop is busy; 0 turns admission off.
   * @default FIXED_ADMISSION_MIN_SEATS
   */
  readonly minSeats: number;
  /**
   * Requests one account may have waiting for its turn; more get 429 at once.
   * @default FIXED_ADMISSION_MAX_WAITING
   */
  readonly maxWaiting: number;
  /**
   * The longest a request waits for its turn before it gets 429, in ms.
   * @default FIXED_ADMISSION_MAX_WAIT_MS
   */
  readonly maxWaitMs: number;
}

/** How a copy leaves the fleet on SIGTERM; see docs/deploy.md "Shutdown". */
export interface ShutdownSettings {
  /**
   * How long /readiness answers 503 while the copy still serves, before it stops accepting
   * connections: long enough for the load balancer's health checks to take it out. @default 5000
   */
  readonly readinessDelayMs: number;
  /** After that, how long requests in flight may take before the process exits anyway (1). @default 10000 */
  readonly timeoutMs: number;
  /**
   * How long an idle keep-alive connection stays open: above the load balancer's own idle
   * timeout (ALB 60 s, nginx 60 s), so the balancer, never the gateway, closes an idle one and
   * never sends a request on a connection being closed. @default 65000
   */
  readonly keepAliveTimeoutMs: number;
}

/**
 * The gateway's one secret (GATEWAY_SECRET, formerly CACHE_HMAC_KEY): it signs `messages` cursors
 * and resume tokens, names accounts (the keyed hash of sys_id in logs, metrics and fair shares)
 * and keys the credential fingerprints of the response cache and live topics. See docs/deploy.md
 * "The secret and its rotation".
 */
export interface SecretSettings {
  /**
   * The key new tokens are signed with; null: a random key of this process (cursors and resume
   * tokens then end with it). In demo mode without GATEWAY_SECRET, DEMO_SECRET. @default null
   */
  readonly current: string | null;
  /** GATEWAY_SECRET_PREVIOUS: cursors and resume tokens signed with it are still accepted. @default null */
  readonly previous: string | null;
  /** Where `current` came from: the environment, the demo secret, or this process alone. */
  readonly source: 'configured' | 'demo' | 'process';
}

export interface Config {
  /**
   * This copy's name in every log line, span and metric (service.instance.id). @default
   * "<hostname>-<pid>"
   */
  readonly instanceId: string;
  /** TCP port the gateway listens on. @default 4000 */
  readonly port: number;
  /** Interface the gateway binds. @default "0.0.0.0" */
  readonly host: string;
  /** @default "info" */
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly upstream: UpstreamSettings;
  readonly limits: GatewayLimits;
  readonly admission: AdmissionSettings;
  /**
   * How far V8 lets the old generation grow past what the last full collection kept before it
   * collects again (V8's --heap-growing-percent, set by src/main.ts); 0 leaves V8's own pacing,
   * which under Node's default heap limit lets it grow fourfold.
   * @default FIXED_HEAP_GROWING_PERCENT
   */
  readonly heapGrowingPercent: number;
  /** Artificial latency of the built-in simulator, in milliseconds. @default 0 */
  readonly simulatorLatencyMs: number;
  /** Demo mode: an inbound message arrives this often, for live updates to show; 0 never. @default 0 */
  readonly simulatorArrivalsMs: number;
  /**
   * Demo mode: how the built-in simulator reads `history_end`.
   * @default FIXED_SIMULATOR_HISTORY_END
   */
  readonly simulatorHistoryEnd: HistoryEndReading;
  /** Browser origins allowed by CORS; empty sends no CORS headers. @default [] */
  readonly corsOrigins: readonly string[];
  /** Allow-list of operations; null runs any operation (and accepts APQ). @default null */
  readonly persistedOperationsPath: string | null;
  /** Serve Prometheus metrics at /metrics. @default true */
  readonly metrics: boolean;
  /**
   * GRAPHIQL: serve GraphiQL and answer schema introspection (`__schema`, `__type`); the
   * federation `_service` field is not introspection and is always answered. @default true;
   * false with NODE_ENV=production (Apollo Server's convention)
   */
  readonly graphiql: boolean;
  /**
   * Serve /metrics on this port of its own (on METRICS_HOST) instead of the public one, so
   * scrapes can be kept off the public network. null serves it beside /graphql. @default null;
   * 9464 with NODE_ENV=production
   */
  readonly metricsPort: number | null;
  /**
   * METRICS_HOST: the interface the metrics port binds (a private one, so scrapes never reach
   * the public network); unused without metricsPort. @default host
   */
  readonly metricsHost: string;
  /** OTLP/HTTP collector base URL; null leaves tracing off. @default null */
  readonly tracingEndpoint: URL | null;
  readonly responseCache: ResponseCacheSettings;
  readonly secret: SecretSettings;
  /** Redis for the cache, APQ and live updates (REDIS_URL and its topology); null: none. @default null */
  readonly redis: RedisSettings | null;
  readonly shutdown: ShutdownSettings;
  readonly live: LiveSettings;
}

/** Subscription.messageAdded; see docs/live-updates.md. */
export interface LiveSettings {
  /** How often each watched number is polled, in ms; 0 turns live updates off. @default 3000 */
  readonly pollMs: number;
  /** Live subscriptions one account may hold on one gateway copy. @default 50 */
  readonly maxPerAccount: number;
  /**
   * Operations one WebSocket connection may run at once.
   * @default FIXED_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION
   */
  readonly maxPerConnection: number;
  /** Live subscriptions this copy holds in all, every account together. @default 5000 */
  readonly maxTotal: number;
  /** WebSocket connections this copy keeps open at once. @default 1000 */
  readonly maxConnections: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

// Byte sizes (loadConfig runs at import time, for DEFAULT_LIMITS: these must come first).
const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

/** A default that code outside loadConfig also falls back on (imported from here, not repeated). */
export const DEFAULT_CACHE_MAX_BYTES = 64 * MIB;

/**
 * Every variable loadConfig reads, and only those: reading a name not listed here does not
 * compile (KnownEnv), and test/config/config.test.ts checks that each one listed is read. Any
 * other variable that looks meant for the gateway stops start-up (unknown-variables.ts), a
 * former one with the value it is now fixed at (fixed.ts).
 */
export const CONFIG_VARIABLES = [
  'NODE_ENV',
  'PORT',
  'HOST',
  'LOG_LEVEL',
  'INSTANCE_ID',
  'UPSTREAM_URL',
  'UPSTREAM_TIMEOUT_MS',
  'UPSTREAM_HISTORY_END',
  'UPSTREAM_CONNECTIONS',
  'MAX_HISTORY_RANGE',
  'MAX_BODY_BYTES',
  'MAX_ALIASES',
  'MAX_DEPTH',
  'MAX_QUERY_COST',
  'MAX_RESPONSE_BYTES',
  'SIMULATOR_LATENCY_MS',
  'SIMULATOR_ARRIVALS_MS',
  'CORS_ORIGINS',
  'PERSISTED_OPERATIONS',
  'METRICS',
  'GRAPHIQL',
  'METRICS_PORT',
  'METRICS_HOST',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'GATEWAY_SECRET',
  'GATEWAY_SECRET_PREVIOUS',
  'CACHE_HMAC_KEY',
  'CACHE_TTL_MS',
  'CACHE_STALE_IF_ERROR_MS',
  'CACHE_MAX_BYTES',
  'REDIS_URL',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_NAME',
  'REDIS_SENTINEL_PASSWORD',
  'REDIS_CLUSTER_NODES',
  'SHUTDOWN_READINESS_DELAY_MS',
  'SHUTDOWN_TIMEOUT_MS',
  'KEEP_ALIVE_TIMEOUT_MS',
  'LIVE_POLL_MS',
  'LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT',
  'LIVE_MAX_SUBSCRIPTIONS',
  'WS_MAX_CONNECTIONS',
] as const;
export type ConfigVariable = (typeof CONFIG_VARIABLES)[number];

type Env = Readonly<Record<string, string | undefined>>;
/** The environment as loadConfig may read it: the listed names only. */
type KnownEnv = { readonly [Name in ConfigVariable]?: string | undefined };

/** What UPSTREAM_URL says to ask for the built-in simulator by name (required in production). */
export const SIMULATOR_UPSTREAM = 'simulator';

/**
 * The secret of demo mode when GATEWAY_SECRET is not set: fixed, so a restarted demo keeps its
 * cursors and resume tokens valid. It is public (derived from this text), so it is used only
 * while the built-in simulator serves, never with UPSTREAM_URL naming a real service.
 */
export const DEMO_SECRET = createHash('sha256')
  .update('sms-graphql-gateway demo mode: not a secret, never used with a real service')
  .digest('hex');

export function loadConfig(environment: Env): Config {
  const env: KnownEnv = environment;
  const problems: string[] = unknownVariables(environment, CONFIG_VARIABLES, RETIRED_VARIABLES);
  const production = env.NODE_ENV?.trim() === 'production';
  const int = (name: ConfigVariable, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);

  // Read in this order so problems are listed in it.
  const port = int('PORT', 4000, 0, 65535);
  const host = env.HOST?.trim() || '0.0.0.0';
  const url = readUpstreamUrl(env.UPSTREAM_URL, production, problems);
  const timeoutMs = int('UPSTREAM_TIMEOUT_MS', 10_000, 1, 600_000);
  // Demo mode included: its simulator reads history_end so (FIXED_SIMULATOR_HISTORY_END).
  const historyEnd =
    readHistoryEnd('UPSTREAM_HISTORY_END', env.UPSTREAM_HISTORY_END, problems) ?? 'exclusive';
  const livePollMs = readPollMs(int('LIVE_POLL_MS', 3_000, 0, 3_600_000), problems);
  const responseCache = readResponseCache(
    env,
    {
      ttlMs: int('CACHE_TTL_MS', 0, 0, 86_400_000),
      staleIfErrorMs: int('CACHE_STALE_IF_ERROR_MS', 0, 0, 604_800_000),
      // Room for at least one answer of the largest size stored.
      maxBytes: int(
        'CACHE_MAX_BYTES',
        DEFAULT_CACHE_MAX_BYTES,
        FIXED_CACHE_MAX_ENTRY_BYTES,
        64 * GIB,
      ),
      maxEntryBytes: FIXED_CACHE_MAX_ENTRY_BYTES,
    },
    livePollMs > 0,
    problems,
  );
  const config: Config = {
    instanceId: readInstanceId(env.INSTANCE_ID, problems),
    port,
    host,
    logLevel,
    upstream: {
      url,
      timeoutMs,
      attemptTimeoutMs: Math.ceil((timeoutMs * FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT) / 100),
      // 256: a 200-number fan-out (ASSUMED_NUMBERS_PER_ACCOUNT) goes in one wave, with room; at
      // 128 it took two service round trips (p50 103 ms against 81 ms at 20 ms latency).
      connections: int('UPSTREAM_CONNECTIONS', 256, 1, 10_000),
      defaultRetryAfterMs: FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS,
      retries: FIXED_UPSTREAM_RETRIES,
      retryBaseDelayMs: FIXED_UPSTREAM_RETRY_BASE_MS,
      breakerThreshold: FIXED_UPSTREAM_BREAKER_THRESHOLD,
      breakerCooldownMs: FIXED_UPSTREAM_BREAKER_COOLDOWN_MS,
      accountSharePercent: FIXED_UPSTREAM_ACCOUNT_SHARE_PERCENT,
      verifiedTtlMs: FIXED_CREDENTIALS_VERIFIED_TTL_MS,
      refusedTtlMs: FIXED_CREDENTIALS_REFUSED_TTL_MS,
      historyEnd,
    },
    limits: {
      maxHistoryRange: int('MAX_HISTORY_RANGE', 1000, 1, 1_000_000),
      maxUpstreamCalls: FIXED_MAX_UPSTREAM_CALLS,
      maxNodeIds: FIXED_MAX_NODE_IDS,
      maxResponseBytes: int('MAX_RESPONSE_BYTES', 8 * MIB, KIB, GIB),
      maxBodyBytes: int('MAX_BODY_BYTES', 100_000, 100, 100_000_000),
      maxTokens: FIXED_MAX_TOKENS,
      maxAliases: int('MAX_ALIASES', 30, 0, 10_000),
      maxDepth: int('MAX_DEPTH', 10, 1, 1_000),
      maxDirectives: FIXED_MAX_DIRECTIVES,
      maxCost: int('MAX_QUERY_COST', 100_000, 1, 1_000_000_000),
    },
    admission: {
      minSeats: FIXED_ADMISSION_MIN_SEATS,
      maxWaiting: FIXED_ADMISSION_MAX_WAITING,
      maxWaitMs: FIXED_ADMISSION_MAX_WAIT_MS,
    },
    heapGrowingPercent: FIXED_HEAP_GROWING_PERCENT,
    simulatorLatencyMs: int('SIMULATOR_LATENCY_MS', 0, 0, 60_000),
    simulatorArrivalsMs: int('SIMULATOR_ARRIVALS_MS', 0, 0, 3_600_000),
    simulatorHistoryEnd: FIXED_SIMULATOR_HISTORY_END,
    corsOrigins: readCorsOrigins(env.CORS_ORIGINS, problems),
    persistedOperationsPath: env.PERSISTED_OPERATIONS?.trim() || null,
    metrics: readSwitch('METRICS', env.METRICS, true, problems),
    graphiql: readSwitch('GRAPHIQL', env.GRAPHIQL, !production, problems),
    metricsPort: readMetricsPort(env, port, problems),
    // Read as HOST is: trimmed; unset or empty, HOST's value (where it listened before).
    metricsHost: env.METRICS_HOST?.trim() || host,
    tracingEndpoint: readHttpUrl(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      env.OTEL_EXPORTER_OTLP_ENDPOINT,
      problems,
    ),
    responseCache,
    secret: readSecret(env, url === null, production, problems),
    redis: readRedisTopology(env, responseCache.redisUrl, problems),
    shutdown: {
      readinessDelayMs: int('SHUTDOWN_READINESS_DELAY_MS', 5_000, 0, 600_000),
      timeoutMs: int('SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
      keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', 65_000, 1_000, 3_600_000),
    },
    live: {
      pollMs: livePollMs,
      maxPerAccount: int('LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT', 50, 1, 100_000),
      maxPerConnection: FIXED_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION,
      maxTotal: int('LIVE_MAX_SUBSCRIPTIONS', 5_000, 1, 1_000_000),
      maxConnections: int('WS_MAX_CONNECTIONS', 1_000, 1, 1_000_000),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** A copy's default name: the host (a container's is its id or pod name) and the process id. */
export function defaultInstanceId(): string {
  return `${hostname()}-${process.pid}`;
}

// Instance ids land in log lines and metric labels: plain characters only, bounded.
const SAFE_INSTANCE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function readInstanceId(raw: string | undefined, problems: string[]): string {
  const text = raw?.trim();
  if (!text)
    return defaultInstanceId()
      .replace(/[^A-Za-z0-9._:-]/g, '_')
      .slice(0, 128);
  if (!SAFE_INSTANCE_ID.test(text)) {
    problems.push('INSTANCE_ID must be 1 to 128 letters, digits or ._:- characters');
  }
  return text;
}

/** host:port,host:port; each port 1-65535. */
function readHostPorts(name: string, raw: string | undefined, problems: string[]): HostPort[] {
  const nodes: HostPort[] = [];
  for (const item of (raw ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) {
      problems.push(`${name}: "${item}" is not host:port (e.g. redis-1:6379)`);
      continue;
    }
    nodes.push({ host: (match[1] ?? '').replace(/^\[|\]$/g, ''), port });
  }
  return nodes;
}

/** REDIS_URL plus, optionally, Sentinel or Cluster: never both. */
function readRedisTopology(
  env: KnownEnv,
  url: URL | null,
  problems: string[],
): RedisSettings | null {
  const sentinels = readHostPorts('REDIS_SENTINELS', env.REDIS_SENTINELS, problems);
  const clusterNodes = readHostPorts('REDIS_CLUSTER_NODES', env.REDIS_CLUSTER_NODES, problems);
  const sentinelName = env.REDIS_SENTINEL_NAME?.trim() || null;
  const sentinelPassword = env.REDIS_SENTINEL_PASSWORD || null;
  if (sentinelPassword && sentinels.length === 0) {
    problems.push('REDIS_SENTINEL_PASSWORD needs REDIS_SENTINELS');
  }
  if ((sentinels.length > 0 || clusterNodes.length > 0 || sentinelName) && url === null) {
    problems.push('REDIS_SENTINELS, REDIS_SENTINEL_NAME and REDIS_CLUSTER_NODES need REDIS_URL');
    return null;
  }
  if (url === null) return null;
  if (sentinels.length > 0 && clusterNodes.length > 0) {
    problems.push('REDIS_SENTINELS and REDIS_CLUSTER_NODES exclude each other: choose one');
  }
  if (sentinelName && sentinels.length === 0) {
    problems.push('REDIS_SENTINEL_NAME needs REDIS_SENTINELS');
  }
  if (clusterNodes.length > 0 && url.pathname.length > 1 && url.pathname !== '/0') {
    problems.push('REDIS_URL must not name a database in cluster mode (a cluster has only 0)');
  }
  return {
    url,
    sentinels,
    sentinelName: sentinels.length > 0 ? (sentinelName ?? 'mymaster') : null,
    sentinelPassword: sentinels.length > 0 ? sentinelPassword : null,
    clusterNodes,
  };
}

/** The limits an empty environment gives: what tests and embedders start from. */
export const DEFAULT_LIMITS: GatewayLimits = loadConfig({}).limits;

/** METRICS_PORT when unset with NODE_ENV=production: the Prometheus exporters' usual port. */
export const DEFAULT_PRODUCTION_METRICS_PORT = 9464;

/**
 * A port apart from PORT; 0 (any free port) is refused, as nobody could find it to scrape.
 * Unset, none (/metrics beside GraphQL), except with NODE_ENV=production: 9464.
 */
function readMetricsPort(env: KnownEnv, port: number, problems: string[]): number | null {
  const raw = env.METRICS_PORT?.trim();
  // In production, scrapes stay off the public port unless METRICS_PORT says otherwise.
  if (!raw && env.NODE_ENV?.trim() === 'production') {
    if (port !== DEFAULT_PRODUCTION_METRICS_PORT) return DEFAULT_PRODUCTION_METRICS_PORT;
    problems.push(
      `METRICS_PORT defaults to ${DEFAULT_PRODUCTION_METRICS_PORT} with NODE_ENV=production, which is PORT: set METRICS_PORT to another port`,
    );
    return null;
  }
  if (!raw) return null;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > 65535) {
    problems.push(`METRICS_PORT must be a whole number from 1 to 65535 (got "${raw}")`);
    return null;
  }
  if (value === port) {
    problems.push(`METRICS_PORT must differ from PORT (both ${value})`);
    return null;
  }
  return value;
}

/** `exclusive` or `inclusive` (any case); null when unset, so the caller picks the default. */
function readHistoryEnd(
  name: string,
  raw: string | undefined,
  problems: string[],
): HistoryEndReading | null {
  const text = raw?.trim().toLowerCase();
  if (!text) return null;
  const reading = HISTORY_END_READINGS.find((r) => r === text);
  if (reading) return reading;
  problems.push(
    `${name} must be exclusive or inclusive (got "${raw}"); \`npm run doctor\` tells which the service uses`,
  );
  return null;
}

/** Polling faster than every 100 ms would be hammering the service, not watching it. */
function readPollMs(value: number, problems: string[]): number {
  if (value !== 0 && value < 100) {
    problems.push(`LIVE_POLL_MS must be 0 (off) or at least 100 (got "${value}")`);
  }
  return value;
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner && typeof inner === 'object' && !(inner instanceof URL)) deepFreeze(inner as object);
  }
  return Object.freeze(value);
}

function readHttpUrl(
  name: ConfigVariable,
  raw: string | undefined,
  problems: string[],
): URL | null {
  const text = raw?.trim();
  if (!text) return null;
  try {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // reported below
  }
  problems.push(`${name} must be an absolute http(s) URL, e.g. http://otel-collector:4318`);
  return null;
}

function readSwitch(
  name: ConfigVariable,
  raw: string | undefined,
  fallback: boolean,
  problems: string[],
): boolean {
  const text = raw?.trim().toLowerCase();
  if (!text) return fallback;
  if (['on', 'true', '1'].includes(text)) return true;
  if (['off', 'false', '0'].includes(text)) return false;
  problems.push(`${name} must be on or off (got "${raw}")`);
  return fallback;
}

/** Comma-separated origins, each exactly scheme://host[:port], or a single "*". */
function readCorsOrigins(raw: string | undefined, problems: string[]): string[] {
  const origins = (raw ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  if (origins.length === 1 && origins[0] === '*') return origins;
  for (const origin of origins) {
    // `null` (sandboxed frames, file:// pages) is only allowed when listed by name.
    if (origin === 'null') continue;
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (parsed?.origin !== origin) {
      problems.push(
        `CORS_ORIGINS: "${origin}" is not an origin like https://app.example.com (or use "*" alone)`,
      );
    }
  }
  return origins;
}

/** The service's URL, or null for the built-in simulator: by default, or by name in production. */
function readUpstreamUrl(
  raw: string | undefined,
  production: boolean,
  problems: string[],
): URL | null {
  const text = raw?.trim();
  if (text === SIMULATOR_UPSTREAM) return null;
  if (!text) {
    // A missing (or misspelt) UPSTREAM_URL must not put a production copy on demo data.
    if (production) {
      problems.push(
        `UPSTREAM_URL is required with NODE_ENV=production (UPSTREAM_URL=${SIMULATOR_UPSTREAM} runs the built-in simulator on purpose)`,
      );
    }
    return null;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problems.push('UPSTREAM_URL must be an absolute http(s) URL, e.g. https://sms.example.com');
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`UPSTREAM_URL must use http or https (got ${url.protocol.replace(':', '')})`);
    return null;
  }
  // Credentials travel per request in the form body; a URL carrying some would be a second, static secret.
  if (url.username || url.password) {
    problems.push('UPSTREAM_URL must not contain credentials; clients send them per request');
    return null;
  }
  if (url.search || url.hash) {
    problems.push('UPSTREAM_URL must not have a query string or fragment');
    return null;
  }
  return url;
}

/** Shortest secret accepted: 32 characters, e.g. `openssl rand -hex 32` gives 64. */
const MIN_SECRET_LENGTH = 32;

/** GATEWAY_SECRET, or CACHE_HMAC_KEY (its former name), as given; null when neither is. */
function givenSecret(env: KnownEnv, problems: string[]): string | null {
  const secret = env.GATEWAY_SECRET || null;
  const alias = env.CACHE_HMAC_KEY || null;
  if (secret !== null && alias !== null && secret !== alias) {
    problems.push(
      'GATEWAY_SECRET and CACHE_HMAC_KEY (its former name) are both set and differ: set GATEWAY_SECRET alone',
    );
  }
  return secret ?? alias;
}

/**
 * The one secret and the previous one (docs/deploy.md "The secret and its rotation"). Messages
 * never echo a secret. Without one: the demo secret while the simulator serves; refused in
 * production; otherwise a random key of this process (a warning at start says what that costs).
 */
function readSecret(
  env: KnownEnv,
  simulator: boolean,
  production: boolean,
  problems: string[],
): SecretSettings {
  const current = givenSecret(env, problems);
  const previous = env.GATEWAY_SECRET_PREVIOUS || null;
  const name = env.GATEWAY_SECRET ? 'GATEWAY_SECRET' : 'CACHE_HMAC_KEY';
  if (current !== null && current.length < MIN_SECRET_LENGTH) {
    problems.push(
      `${name} must be at least ${MIN_SECRET_LENGTH} characters (got ${current.length})`,
    );
  }
  if (previous !== null && previous.length < MIN_SECRET_LENGTH) {
    problems.push(
      `GATEWAY_SECRET_PREVIOUS must be at least ${MIN_SECRET_LENGTH} characters (got ${previous.length})`,
    );
  }
  if (previous !== null && current === null) {
    problems.push(
      'GATEWAY_SECRET_PREVIOUS needs GATEWAY_SECRET: the key new tokens are signed with',
    );
  }
  if (current !== null) return { current, previous, source: 'configured' };
  if (simulator) return { current: DEMO_SECRET, previous: null, source: 'demo' };
  if (production) {
    problems.push(
      `GATEWAY_SECRET is required with NODE_ENV=production: the same secret of at least ${MIN_SECRET_LENGTH} characters on every copy, so cursors and resume tokens survive restarts (make one with \`openssl rand -hex 32\`)`,
    );
  }
  return { current: null, previous: null, source: 'process' };
}

// Messages here never echo REDIS_URL or the secret: the first may carry a password.
function readResponseCache(
  env: KnownEnv,
  sizes: Pick<ResponseCacheSettings, 'ttlMs' | 'staleIfErrorMs' | 'maxBytes' | 'maxEntryBytes'>,
  liveOn: boolean,
  problems: string[],
): ResponseCacheSettings {
  const { ttlMs } = sizes;
  let redisUrl: URL | null = null;
  const rawUrl = env.REDIS_URL?.trim();
  if (rawUrl) {
    try {
      redisUrl = new URL(rawUrl);
    } catch {
      problems.push('REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://redis:6379');
    }
    if (redisUrl && redisUrl.protocol !== 'redis:' && redisUrl.protocol !== 'rediss:') {
      problems.push('REDIS_URL must use redis:// or rediss://');
      redisUrl = null;
    }
  }
  // Copies sharing one Redis must fingerprint credentials alike, or none would hit the others'
  // cache entries or live topics; the demo secret, being public, does not count.
  if ((ttlMs > 0 || liveOn) && rawUrl && !env.GATEWAY_SECRET && !env.CACHE_HMAC_KEY) {
    problems.push(
      `GATEWAY_SECRET is required with REDIS_URL: the same secret of at least ${MIN_SECRET_LENGTH} characters on every gateway copy (make one with \`openssl rand -hex 32\`)`,
    );
  }
  return { ...sizes, redisUrl };
}

/** What `npm run doctor` needs: the service and one account's credentials (docs/doctor.md). */
export interface DoctorSettings {
  readonly url: URL;
  readonly sysId: string;
  readonly authToken: string;
  /** What a gateway with this environment assumes, so the doctor can say whether it holds. */
  readonly historyEnd: HistoryEndReading;
  readonly timeoutMs: number;
}

/**
 * UPSTREAM_URL, SMS_SYS_ID and SMS_AUTH_TOKEN for the doctor, from the environment only. Problems
 * name the variable, never its value: two of them are secrets.
 */
export function loadDoctorSettings(env: Env): DoctorSettings {
  const problems: string[] = [];
  // The gateway's own reading of this environment: what it would assume, every value checked.
  let gateway: Config | null = null;
  try {
    gateway = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  const url = gateway?.upstream.url ?? null;
  if (gateway !== null && url === null) {
    problems.push('UPSTREAM_URL is not set: the doctor asks the real service, at its base URL');
  }
  const sysId = env.SMS_SYS_ID?.trim() ?? '';
  const authToken = env.SMS_AUTH_TOKEN?.trim() ?? '';
  if (!sysId) problems.push("SMS_SYS_ID is not set: one account's sys_id");
  if (!authToken) problems.push("SMS_AUTH_TOKEN is not set: that account's auth_token");
  if (problems.length > 0 || url === null || gateway === null) throw new ConfigError(problems);
  const { historyEnd, timeoutMs } = gateway.upstream;
  return { url, sysId, authToken, historyEnd, timeoutMs };
}
