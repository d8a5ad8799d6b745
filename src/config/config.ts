/**
 * Environment -> validated, frozen configuration: each variable read as settings.ts declares it
 * (defaults, bounds and docs there), then the rules between variables here. Every bad value is
 * reported, each in one line; messages never echo a secret or REDIS_URL (it may carry a password).
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import * as fixed from './fixed.js';
import {
  CONFIG_VARIABLES,
  DEFAULT_PRODUCTION_METRICS_PORT,
  DOCTOR_SETTINGS,
  fallbacks,
  MIN_SECRET_LENGTH,
  readSettings,
  RETIRED_VARIABLES,
  SETTINGS,
  type Env,
  type HistoryEndReading,
  type HostPort,
  type LogLevel,
  type Values,
} from './settings.js';
import { unknownVariables } from './unknown-variables.js';

export {
  CONFIG_VARIABLES,
  DEFAULT_PRODUCTION_METRICS_PORT,
  HISTORY_END_READINGS,
  LOG_LEVELS,
  SIMULATOR_UPSTREAM,
  type ConfigVariable,
  type HistoryEndReading,
  type HostPort,
} from './settings.js';

// Each field's variable, default and bounds: settings.ts; a FIXED_ one's value and why: fixed.ts.

/** What the query-limit plugins enforce on each document (src/http/plugins/query-limits.ts). */
export interface QueryLimits {
  /** MAX_BODY_BYTES */ readonly maxBodyBytes: number;
  /** FIXED_MAX_TOKENS: lexical tokens in one document. */ readonly maxTokens: number;
  /** MAX_ALIASES */ readonly maxAliases: number;
  /** MAX_DEPTH */ readonly maxDepth: number;
  /** FIXED_MAX_DIRECTIVES */ readonly maxDirectives: number;
  /** MAX_QUERY_COST (src/graph/estimate-cost.ts) */ readonly maxCost: number;
}

/** Limits on what one GraphQL request may cost; see docs/limits.md. */
export interface GatewayLimits extends QueryLimits {
  /** MAX_HISTORY_RANGE */ readonly maxHistoryRange: number;
  /** FIXED_MAX_UPSTREAM_CALLS */ readonly maxUpstreamCalls: number;
  /** FIXED_MAX_NODE_IDS: ids of one `nodes(ids:)`, or one `_entities` */ readonly maxNodeIds: number;
  /** MAX_RESPONSE_BYTES (src/graph/response-budget.ts) */ readonly maxResponseBytes: number;
}

export interface UpstreamSettings {
  /** UPSTREAM_URL; null starts the built-in simulator instead. */ readonly url: URL | null;
  /** UPSTREAM_TIMEOUT_MS, retries and backoff included. */ readonly timeoutMs: number;
  /** One attempt's own limit: FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT of timeoutMs. */
  readonly attemptTimeoutMs: number;
  /** UPSTREAM_CONNECTIONS, above the adaptive limit */ readonly connections: number;
  /** FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS */ readonly defaultRetryAfterMs: number;
  /** FIXED_UPSTREAM_RETRIES */ readonly retries: number;
  /** FIXED_UPSTREAM_RETRY_BASE_MS */ readonly retryBaseDelayMs: number;
  /** FIXED_UPSTREAM_BREAKER_THRESHOLD */ readonly breakerThreshold: number;
  /** FIXED_UPSTREAM_BREAKER_COOLDOWN_MS */ readonly breakerCooldownMs: number;
  /** FIXED_UPSTREAM_ACCOUNT_SHARE_PERCENT */ readonly accountSharePercent: number;
  /** FIXED_CREDENTIALS_VERIFIED_TTL_MS */ readonly verifiedTtlMs: number;
  /** FIXED_CREDENTIALS_REFUSED_TTL_MS */ readonly refusedTtlMs: number;
  /** UPSTREAM_HISTORY_END (`npm run doctor` finds out). */ readonly historyEnd: HistoryEndReading;
}

/** The opt-in response cache; see docs/cache.md. */
export interface ResponseCacheSettings {
  /** CACHE_TTL_MS; 0 turns the cache off. */ readonly ttlMs: number;
  /** REDIS_URL; null keeps the cache in this process's memory. */ readonly redisUrl: URL | null;
  /** CACHE_STALE_IF_ERROR_MS; see docs/stale-if-error.md. */ readonly staleIfErrorMs: number;
  /** CACHE_MAX_BYTES, stale copies included. */ readonly maxBytes: number;
  /** FIXED_CACHE_MAX_ENTRY_BYTES: larger answers are not stored. */ readonly maxEntryBytes: number;
}

/** Where Redis is (src/redis); see docs/deploy.md "Redis topologies". */
export interface RedisSettings {
  /**
   * REDIS_URL, redis:// or rediss://: user, password, TLS and database for every topology; the
   * server itself with neither sentinels nor cluster nodes, one more seed node in cluster mode.
   */
  readonly url: URL;
  /** REDIS_SENTINELS */ readonly sentinels: readonly HostPort[];
  /** REDIS_SENTINEL_NAME; "mymaster" with sentinels. */ readonly sentinelName: string | null;
  /** REDIS_SENTINEL_PASSWORD */ readonly sentinelPassword: string | null;
  /** REDIS_CLUSTER_NODES */ readonly clusterNodes: readonly HostPort[];
}

/** The fair queue in front of every request (src/traffic/fair-admission.ts); see docs/limits.md. */
export interface AdmissionSettings {
  /** FIXED_ADMISSION_MIN_SEATS; 0 turns admission off. */ readonly minSeats: number;
  /** FIXED_ADMISSION_MAX_WAITING: per account; more get 429. */ readonly maxWaiting: number;
  /** FIXED_ADMISSION_MAX_WAIT_MS */ readonly maxWaitMs: number;
}

/** How a copy leaves the fleet on SIGTERM; see docs/deploy.md "Shutdown". */
export interface ShutdownSettings {
  /** SHUTDOWN_READINESS_DELAY_MS */ readonly readinessDelayMs: number;
  /** SHUTDOWN_TIMEOUT_MS */ readonly timeoutMs: number;
  /** KEEP_ALIVE_TIMEOUT_MS */ readonly keepAliveTimeoutMs: number;
}

/**
 * The gateway's one secret (GATEWAY_SECRET, formerly CACHE_HMAC_KEY): it signs `messages` cursors
 * and resume tokens, names accounts (the keyed hash of sys_id in logs, metrics and fair shares)
 * and keys the credential fingerprints of the response cache and live topics. See docs/deploy.md
 * "The secret and its rotation".
 */
export interface SecretSettings {
  /** Signs new tokens; null: a random key of this process. Demo mode: DEMO_SECRET. */
  readonly current: string | null;
  /** GATEWAY_SECRET_PREVIOUS: tokens signed with it are still accepted. */
  readonly previous: string | null;
  /** Where `current` came from: the environment, the demo secret, or this process alone. */
  readonly source: 'configured' | 'demo' | 'process';
}

/** Subscription.messageAdded; see docs/live-updates.md. */
export interface LiveSettings {
  /** LIVE_POLL_MS; 0 turns live updates off. */ readonly pollMs: number;
  /** LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT */ readonly maxPerAccount: number;
  /** FIXED_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION */ readonly maxPerConnection: number;
  /** LIVE_MAX_SUBSCRIPTIONS */ readonly maxTotal: number;
  /** WS_MAX_CONNECTIONS */ readonly maxConnections: number;
}

export interface Config {
  /** INSTANCE_ID (service.instance.id). */ readonly instanceId: string;
  /** PORT */ readonly port: number;
  /** HOST */ readonly host: string;
  /** LOG_LEVEL */ readonly logLevel: LogLevel;
  readonly upstream: UpstreamSettings;
  readonly limits: GatewayLimits;
  readonly admission: AdmissionSettings;
  /** FIXED_HEAP_GROWING_PERCENT (src/main.ts sets V8's) */ readonly heapGrowingPercent: number;
  /** SIMULATOR_LATENCY_MS */ readonly simulatorLatencyMs: number;
  /** SIMULATOR_ARRIVALS_MS */ readonly simulatorArrivalsMs: number;
  /** FIXED_SIMULATOR_HISTORY_END */ readonly simulatorHistoryEnd: HistoryEndReading;
  /** CORS_ORIGINS; empty sends no CORS headers. */ readonly corsOrigins: readonly string[];
  /** PERSISTED_OPERATIONS */ readonly persistedOperationsPath: string | null;
  /** METRICS */ readonly metrics: boolean;
  /** GRAPHIQL: GraphiQL and introspection */ readonly graphiql: boolean;
  /** METRICS_PORT; null serves /metrics beside /graphql. */ readonly metricsPort: number | null;
  /** METRICS_HOST; unused without metricsPort. */ readonly metricsHost: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT */ readonly tracingEndpoint: URL | null;
  readonly responseCache: ResponseCacheSettings;
  readonly secret: SecretSettings;
  /** Redis for the cache, APQ and live updates; null: none. */ readonly redis: RedisSettings | null;
  readonly shutdown: ShutdownSettings;
  readonly live: LiveSettings;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** A default that code outside loadConfig also falls back on (imported from here, not repeated). */
export const DEFAULT_CACHE_MAX_BYTES = SETTINGS.CACHE_MAX_BYTES.fallback;

/**
 * The secret of demo mode when GATEWAY_SECRET is not set: fixed, so a restarted demo keeps its
 * cursors and resume tokens valid. It is public (derived from this text), so it is used only
 * while the built-in simulator serves, never with UPSTREAM_URL naming a real service.
 */
export const DEMO_SECRET = createHash('sha256')
  .update('sms-graphql-gateway demo mode: not a secret, never used with a real service')
  .digest('hex');

type Settings = Values<typeof SETTINGS>;

function limits(v: Settings): GatewayLimits {
  return {
    maxHistoryRange: v.MAX_HISTORY_RANGE,
    maxUpstreamCalls: fixed.FIXED_MAX_UPSTREAM_CALLS,
    maxNodeIds: fixed.FIXED_MAX_NODE_IDS,
    maxResponseBytes: v.MAX_RESPONSE_BYTES,
    maxBodyBytes: v.MAX_BODY_BYTES,
    maxTokens: fixed.FIXED_MAX_TOKENS,
    maxAliases: v.MAX_ALIASES,
    maxDepth: v.MAX_DEPTH,
    maxDirectives: fixed.FIXED_MAX_DIRECTIVES,
    maxCost: v.MAX_QUERY_COST,
  };
}

/** The limits an empty environment gives: what tests and embedders start from. */
export const DEFAULT_LIMITS: GatewayLimits = Object.freeze(limits(fallbacks(SETTINGS)));

export function loadConfig(environment: Env): Config {
  const problems = unknownVariables(environment, CONFIG_VARIABLES, RETIRED_VARIABLES);
  const v = readSettings(SETTINGS, environment, problems);
  const production = v.NODE_ENV === 'production';
  // A missing (or misspelt) UPSTREAM_URL must not put a production copy on demo data.
  if (v.UPSTREAM_URL === undefined && production)
    problems.push(
      'UPSTREAM_URL is required with NODE_ENV=production (UPSTREAM_URL=simulator runs the built-in simulator on purpose)',
    );
  const url = v.UPSTREAM_URL ?? null;
  const config: Config = {
    instanceId:
      v.INSTANCE_ID ??
      defaultInstanceId()
        .replace(/[^A-Za-z0-9._:-]/g, '_')
        .slice(0, 128),
    port: v.PORT,
    host: v.HOST,
    logLevel: v.LOG_LEVEL,
    upstream: {
      url,
      timeoutMs: v.UPSTREAM_TIMEOUT_MS,
      attemptTimeoutMs: Math.ceil(
        (v.UPSTREAM_TIMEOUT_MS * fixed.FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT) / 100,
      ),
      connections: v.UPSTREAM_CONNECTIONS,
      defaultRetryAfterMs: fixed.FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS,
      retries: fixed.FIXED_UPSTREAM_RETRIES,
      retryBaseDelayMs: fixed.FIXED_UPSTREAM_RETRY_BASE_MS,
      breakerThreshold: fixed.FIXED_UPSTREAM_BREAKER_THRESHOLD,
      breakerCooldownMs: fixed.FIXED_UPSTREAM_BREAKER_COOLDOWN_MS,
      accountSharePercent: fixed.FIXED_UPSTREAM_ACCOUNT_SHARE_PERCENT,
      verifiedTtlMs: fixed.FIXED_CREDENTIALS_VERIFIED_TTL_MS,
      refusedTtlMs: fixed.FIXED_CREDENTIALS_REFUSED_TTL_MS,
      // Demo mode included: its simulator reads history_end so (FIXED_SIMULATOR_HISTORY_END).
      historyEnd: v.UPSTREAM_HISTORY_END,
    },
    limits: limits(v),
    admission: {
      minSeats: fixed.FIXED_ADMISSION_MIN_SEATS,
      maxWaiting: fixed.FIXED_ADMISSION_MAX_WAITING,
      maxWaitMs: fixed.FIXED_ADMISSION_MAX_WAIT_MS,
    },
    heapGrowingPercent: fixed.FIXED_HEAP_GROWING_PERCENT,
    simulatorLatencyMs: v.SIMULATOR_LATENCY_MS,
    simulatorArrivalsMs: v.SIMULATOR_ARRIVALS_MS,
    simulatorHistoryEnd: fixed.FIXED_SIMULATOR_HISTORY_END,
    corsOrigins: v.CORS_ORIGINS,
    persistedOperationsPath: v.PERSISTED_OPERATIONS,
    metrics: v.METRICS,
    graphiql: v.GRAPHIQL ?? !production,
    metricsPort: metricsPort(v, production, problems),
    metricsHost: v.METRICS_HOST ?? v.HOST,
    tracingEndpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT,
    responseCache: {
      ttlMs: v.CACHE_TTL_MS,
      redisUrl: v.REDIS_URL,
      staleIfErrorMs: v.CACHE_STALE_IF_ERROR_MS,
      maxBytes: v.CACHE_MAX_BYTES,
      maxEntryBytes: fixed.FIXED_CACHE_MAX_ENTRY_BYTES,
    },
    secret: readSecret(v, url === null, production, problems),
    redis: redisTopology(v, problems),
    shutdown: {
      readinessDelayMs: v.SHUTDOWN_READINESS_DELAY_MS,
      timeoutMs: v.SHUTDOWN_TIMEOUT_MS,
      keepAliveTimeoutMs: v.KEEP_ALIVE_TIMEOUT_MS,
    },
    live: {
      pollMs: v.LIVE_POLL_MS,
      maxPerAccount: v.LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT,
      maxPerConnection: fixed.FIXED_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION,
      maxTotal: v.LIVE_MAX_SUBSCRIPTIONS,
      maxConnections: v.WS_MAX_CONNECTIONS,
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** A copy's default name: the host (a container's is its id or pod name) and the process id. */
export function defaultInstanceId(): string {
  return `${hostname()}-${process.pid}`;
}

/** A port apart from PORT; unset, none (/metrics beside GraphQL), except in production: 9464. */
function metricsPort(v: Settings, production: boolean, problems: string[]): number | null {
  // In production, scrapes stay off the public port unless METRICS_PORT says otherwise.
  if (v.METRICS_PORT === null && production) {
    if (v.PORT !== DEFAULT_PRODUCTION_METRICS_PORT) return DEFAULT_PRODUCTION_METRICS_PORT;
    problems.push(
      `METRICS_PORT defaults to ${DEFAULT_PRODUCTION_METRICS_PORT} with NODE_ENV=production, which is PORT: set METRICS_PORT to another port`,
    );
    return null;
  }
  if (v.METRICS_PORT === v.PORT) {
    problems.push(`METRICS_PORT must differ from PORT (both ${v.PORT})`);
    return null;
  }
  return v.METRICS_PORT;
}

/**
 * The one secret and the previous one (docs/deploy.md "The secret and its rotation"). Without
 * one: the demo secret while the simulator serves; refused in production; otherwise a random key
 * of this process (a warning at start says what that costs).
 */
function readSecret(
  v: Settings,
  simulator: boolean,
  production: boolean,
  problems: string[],
): SecretSettings {
  const current = v.GATEWAY_SECRET ?? v.CACHE_HMAC_KEY;
  const previous = v.GATEWAY_SECRET_PREVIOUS;
  if (v.GATEWAY_SECRET !== null && v.CACHE_HMAC_KEY !== null && current !== v.CACHE_HMAC_KEY)
    problems.push(
      'GATEWAY_SECRET and CACHE_HMAC_KEY (its former name) are both set and differ: set GATEWAY_SECRET alone',
    );
  if (previous !== null && current === null)
    problems.push(
      'GATEWAY_SECRET_PREVIOUS needs GATEWAY_SECRET: the key new tokens are signed with',
    );
  // Copies sharing one Redis must fingerprint credentials alike, or none would hit the others'
  // cache entries or live topics; the demo secret, being public, does not count.
  if (current === null && v.REDIS_URL && (v.CACHE_TTL_MS > 0 || v.LIVE_POLL_MS > 0))
    problems.push(
      `GATEWAY_SECRET is required with REDIS_URL: the same secret of at least ${MIN_SECRET_LENGTH} characters on every gateway copy (make one with \`openssl rand -hex 32\`)`,
    );
  if (current !== null) return { current, previous, source: 'configured' };
  if (simulator) return { current: DEMO_SECRET, previous: null, source: 'demo' };
  if (production)
    problems.push(
      `GATEWAY_SECRET is required with NODE_ENV=production: the same secret of at least ${MIN_SECRET_LENGTH} characters on every copy, so cursors and resume tokens survive restarts (make one with \`openssl rand -hex 32\`)`,
    );
  return { current: null, previous: null, source: 'process' };
}

/** REDIS_URL plus, optionally, Sentinel or Cluster: never both. */
function redisTopology(v: Settings, problems: string[]): RedisSettings | null {
  const { REDIS_URL: url, REDIS_SENTINELS: sentinels, REDIS_CLUSTER_NODES: clusterNodes } = v;
  const name = v.REDIS_SENTINEL_NAME;
  if (v.REDIS_SENTINEL_PASSWORD && sentinels.length === 0)
    problems.push('REDIS_SENTINEL_PASSWORD needs REDIS_SENTINELS');
  if ((sentinels.length > 0 || clusterNodes.length > 0 || name) && url === null) {
    problems.push('REDIS_SENTINELS, REDIS_SENTINEL_NAME and REDIS_CLUSTER_NODES need REDIS_URL');
    return null;
  }
  if (url === null) return null;
  if (sentinels.length > 0 && clusterNodes.length > 0)
    problems.push('REDIS_SENTINELS and REDIS_CLUSTER_NODES exclude each other: choose one');
  if (name && sentinels.length === 0) problems.push('REDIS_SENTINEL_NAME needs REDIS_SENTINELS');
  if (clusterNodes.length > 0 && url.pathname.length > 1 && url.pathname !== '/0')
    problems.push('REDIS_URL must not name a database in cluster mode (a cluster has only 0)');
  const withSentinels = sentinels.length > 0;
  return {
    url,
    sentinels,
    sentinelName: withSentinels ? (name ?? 'mymaster') : null,
    sentinelPassword: withSentinels ? v.REDIS_SENTINEL_PASSWORD : null,
    clusterNodes,
  };
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner && typeof inner === 'object' && !(inner instanceof URL)) deepFreeze(inner as object);
  }
  return Object.freeze(value);
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
  const { SMS_SYS_ID: sysId, SMS_AUTH_TOKEN: authToken } = readSettings(
    DOCTOR_SETTINGS,
    env,
    problems,
  );
  if (!sysId) problems.push("SMS_SYS_ID is not set: one account's sys_id");
  if (!authToken) problems.push("SMS_AUTH_TOKEN is not set: that account's auth_token");
  if (problems.length > 0 || url === null || gateway === null || !sysId || !authToken)
    throw new ConfigError(problems);
  const { historyEnd, timeoutMs } = gateway.upstream;
  return { url, sysId, authToken, historyEnd, timeoutMs };
}
