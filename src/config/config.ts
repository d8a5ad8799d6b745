/**
 * Environment -> validated, frozen configuration: each variable read as settings.ts declares it,
 * then the rules between them. Each bad value is one line, never echoing a secret or REDIS_URL.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import * as fixed from './fixed.js';
import {
  CONFIG_VARIABLES,
  DEFAULT_PRODUCTION_METRICS_PORT,
  DOCTOR_SETTINGS,
  MIN_SECRET_LENGTH,
  readSettings,
  RETIRED_VARIABLES,
  SETTINGS,
  type Env,
  type Values,
} from './settings.js';
import { unknownVariables } from './unknown-variables.js';

export {
  CONFIG_VARIABLES,
  DEFAULT_PRODUCTION_METRICS_PORT,
  type HistoryEndReading,
} from './settings.js';

/** What loadConfig returns, frozen: the object `read` builds from settings.ts and fixed.ts. */
export type Config = Frozen<ReturnType<typeof read>>;
type Frozen<T> = T extends URL | readonly unknown[]
  ? T
  : T extends object
    ? { readonly [K in keyof T]: Frozen<T[K]> }
    : T;

/** Limits on what one GraphQL request may cost; see docs/limits.md. */
export type GatewayLimits = Config['limits'];
/** What the query-limit plugins enforce on each document (src/http/plugins/query-limits.ts). */
export type QueryLimits = Pick<
  GatewayLimits,
  'maxBodyBytes' | 'maxTokens' | 'maxAliases' | 'maxDepth' | 'maxDirectives' | 'maxCost'
>;
export type UpstreamSettings = Config['upstream'];
/** The opt-in response cache; see docs/cache.md. */
export type ResponseCacheSettings = Config['responseCache'];
/** Where Redis is (src/redis); see docs/deploy.md "Redis topologies". */
export type RedisSettings = NonNullable<Config['redis']>;
/** The fair queue in front of every request (src/traffic/fair-admission.ts). */
export type AdmissionSettings = Config['admission'];

/** The gateway's one secret: docs/deploy.md "The secret and its rotation". */
interface SecretSettings {
  /** Signs new tokens; null: a random key of this process. Demo mode: DEMO_SECRET. */
  readonly current: string | null;
  /** GATEWAY_SECRET_PREVIOUS: tokens signed with it are still accepted. */
  readonly previous: string | null;
  /** Where `current` came from: the environment, the demo secret, or this process alone. */
  readonly source: 'configured' | 'demo' | 'process';
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** A default that code outside loadConfig also falls back on (imported from here, not repeated). */
export const DEFAULT_CACHE_MAX_BYTES = SETTINGS.CACHE_MAX_BYTES.fallback;

/** Demo mode's secret: fixed, so a restarted demo's tokens stay valid; public: simulator only. */
export const DEMO_SECRET = createHash('sha256')
  .update('sms-graphql-gateway demo mode: not a secret, never used with a real service')
  .digest('hex');

type Settings = Values<typeof SETTINGS>;

export function loadConfig(environment: Env): Config {
  const problems = unknownVariables(environment, CONFIG_VARIABLES, RETIRED_VARIABLES);
  const config = read(readSettings(SETTINGS, environment, problems), problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

function read(v: Settings, problems: string[]) {
  const production = v.NODE_ENV === 'production';
  // A missing (or misspelt) UPSTREAM_URL must not put a production copy on demo data.
  if (v.UPSTREAM_URL === undefined && production)
    problems.push(
      'UPSTREAM_URL is required with NODE_ENV=production (UPSTREAM_URL=simulator runs the built-in simulator on purpose)',
    );
  const url = v.UPSTREAM_URL ?? null;
  return {
    /** service.instance.id */
    instanceId:
      v.INSTANCE_ID ??
      defaultInstanceId()
        .replace(/[^A-Za-z0-9._:-]/g, '_')
        .slice(0, 128),
    port: v.PORT,
    host: v.HOST,
    logLevel: v.LOG_LEVEL,
    upstream: {
      /** null starts the built-in simulator instead. */
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
      /** 0 turns admission off. */
      minSeats: fixed.FIXED_ADMISSION_MIN_SEATS,
      maxWaiting: fixed.FIXED_ADMISSION_MAX_WAITING,
      maxWaitMs: fixed.FIXED_ADMISSION_MAX_WAIT_MS,
    },
    /** src/main.ts sets V8's. */
    heapGrowingPercent: fixed.FIXED_HEAP_GROWING_PERCENT,
    simulatorLatencyMs: v.SIMULATOR_LATENCY_MS,
    simulatorArrivalsMs: v.SIMULATOR_ARRIVALS_MS,
    simulatorHistoryEnd: fixed.FIXED_SIMULATOR_HISTORY_END,
    corsOrigins: v.CORS_ORIGINS,
    persistedOperationsPath: v.PERSISTED_OPERATIONS,
    metrics: v.METRICS,
    graphiql: v.GRAPHIQL ?? !production,
    /** null serves /metrics beside /graphql. */
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
    secret: readSecret(v, url === null, problems),
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
      publicUrl: v.GATEWAY_PUBLIC_URL,
    },
  };
}

function limits(v: Settings) {
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
export const DEFAULT_LIMITS: GatewayLimits = Object.freeze(limits(readSettings(SETTINGS, {}, [])));

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
  if (v.METRICS_PORT !== v.PORT) return v.METRICS_PORT;
  problems.push(`METRICS_PORT must differ from PORT (both ${v.PORT})`);
  return null;
}

/** Without a secret: the demo one while the simulator serves; refused in production; else none. */
function readSecret(v: Settings, simulator: boolean, problems: string[]): SecretSettings {
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
  if (v.NODE_ENV === 'production')
    problems.push(
      `GATEWAY_SECRET is required with NODE_ENV=production: the same secret of at least ${MIN_SECRET_LENGTH} characters on every copy, so cursors and resume tokens survive restarts (make one with \`openssl rand -hex 32\`)`,
    );
  return { current: null, previous: null, source: 'process' };
}

/** REDIS_URL plus, optionally, Sentinel or Cluster: never both. */
function redisTopology(v: Settings, problems: string[]) {
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
  for (const inner of Object.values(value))
    if (inner && typeof inner === 'object' && !(inner instanceof URL)) deepFreeze(inner as object);
  return Object.freeze(value);
}

/**
 * What `npm run doctor` needs (docs/doctor.md): the service, one account's credentials, and what a
 * gateway with this environment assumes. Problems name the variable, never its value (secrets).
 */
export function loadDoctorSettings(env: Env) {
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
  if (gateway !== null && url === null)
    problems.push('UPSTREAM_URL is not set: the doctor asks the real service, at its base URL');
  const doctor = readSettings(DOCTOR_SETTINGS, env, problems);
  const { SMS_SYS_ID: sysId, SMS_AUTH_TOKEN: authToken } = doctor;
  if (!sysId) problems.push("SMS_SYS_ID is not set: one account's sys_id");
  if (!authToken) problems.push("SMS_AUTH_TOKEN is not set: that account's auth_token");
  if (problems.length > 0 || url === null || gateway === null || !sysId || !authToken)
    throw new ConfigError(problems);
  const { historyEnd, timeoutMs } = gateway.upstream;
  return { url, sysId, authToken, historyEnd, timeoutMs };
}
