/**
 * Every environment variable, declared once: how it is read (default, bounds, the message for a
 * bad value) and its row in docs/configuration.md (`npm run docs:config` renders the tables).
 * Rules between variables (production, the secret, Redis topology) are config.ts's.
 */
import * as fixed from './fixed.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** How the service reads `history_end`; src/upstream/history-end.ts translates to it. */
const HISTORY_END_READINGS = ['exclusive', 'inclusive'] as const;
export type HistoryEndReading = (typeof HISTORY_END_READINGS)[number];

export interface Setting<T = unknown> {
  /** The value when the variable is unset or empty. */
  readonly fallback: T;
  /** A set variable's value; a bad one adds a problem naming it (never echoing a secret). */
  readonly parse: (text: string, name: string, problems: string[]) => T;
  /** Read as given, not trimmed (secrets). */
  readonly verbatim: boolean;
  /** Its row's Default and Meaning cells in docs/configuration.md. */
  readonly shown: string;
  readonly doc: string;
}

/** A row's Meaning, and its Default when the fallback does not say it (`unset`, `` `on` ``). */
type About = Pick<Setting, 'doc'> & { readonly shown?: string };

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;
const code = (value: unknown): string => `\`${String(value)}\``;
/** Shortest secret accepted: 32 characters, e.g. `openssl rand -hex 32` gives 64. */
export const MIN_SECRET_LENGTH = 32;
/** METRICS_PORT when unset with NODE_ENV=production: the Prometheus exporters' usual port. */
export const DEFAULT_PRODUCTION_METRICS_PORT = 9464;
/** What UPSTREAM_URL says to ask for the built-in simulator by name (required in production). */
export const SIMULATOR_UPSTREAM = 'simulator';

function setting<T>(
  fallback: T,
  about: About,
  parse: Setting<T>['parse'],
  verbatim = false,
): Setting<T> {
  const word = typeof fallback === 'boolean' ? (fallback ? 'on' : 'off') : fallback;
  const shown = about.shown ?? (word == null || Array.isArray(word) ? 'unset' : code(word));
  return { fallback, parse, verbatim, shown, doc: about.doc };
}

/** Adds `problem` and gives `value` (the fallback, or what a problem leaves as read). */
function refuse<T>(problems: string[], problem: string, value: T): T {
  problems.push(problem);
  return value;
}

/** A whole number from min to max; with `zeroOff`, 0 too (the feature off). */
function int<F extends number | null>(
  fallback: F,
  min: number,
  max: number,
  about: About & { zeroOff?: true },
): Setting<number | F> {
  const range = `${about.zeroOff ? '0 (off) or ' : ''}a whole number from ${min} to ${max}`;
  return setting<number | F>(fallback, about, (text, name, problems) => {
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    const zero = about.zeroOff && value === 0;
    if (Number.isSafeInteger(value) && value <= max && (value >= min || zero)) return value;
    return refuse(problems, `${name} must be ${range} (got "${text}")`, fallback);
  });
}

/** Trimmed text; `must` refuses some, saying what it must be. */
function text<F extends string | null>(fallback: F, about: About & { must?: [RegExp, string] }) {
  return setting<string | F>(fallback, about, (value, name, problems) => {
    const [pattern, phrase] = about.must ?? [/^/, ''];
    return pattern.test(value) ? value : refuse(problems, `${name} must be ${phrase}`, value);
  });
}

/** Taken as given, not trimmed; a secret of at least `minLength` (never echoed, its length is). */
function verbatim(minLength: number, about: About): Setting<string | null> {
  const parse: Setting<string>['parse'] = (value, name, problems) => {
    const problem = `${name} must be at least ${minLength} characters (got ${value.length})`;
    return value.length >= minLength ? value : refuse(problems, problem, value);
  };
  return setting<string | null>(null, about, parse, true);
}

/** One of `values`, in any case; `hint` ends the problem's line. */
function oneOf<const V extends readonly string[]>(
  values: V,
  fallback: V[number],
  about: About & { hint?: string },
): Setting<V[number]> {
  const choices = values.length > 2 ? `one of ${values.join(', ')}` : values.join(' or ');
  return setting(fallback, about, (value, name, problems) => {
    const found = values.find((v) => v === value.toLowerCase());
    const problem = `${name} must be ${choices} (got "${value}")${about.hint ?? ''}`;
    return found ?? refuse(problems, problem, fallback);
  });
}

/** on/true/1 or off/false/0; a null fallback leaves the default to config.ts. */
function onOff<F extends boolean | null>(fallback: F, about: About): Setting<boolean | F> {
  return setting<boolean | F>(fallback, about, (value, name, problems) => {
    const word = value.toLowerCase();
    if (['on', 'true', '1'].includes(word)) return true;
    if (['off', 'false', '0'].includes(word)) return false;
    return refuse(problems, `${name} must be on or off (got "${value}")`, fallback);
  });
}

/** Comma-separated items, each read by `item` (null: refused, with a problem). */
function list<T>(
  item: (value: string, name: string, problems: string[], alone: boolean) => T | null,
  about: About,
): Setting<readonly T[]> {
  return setting<readonly T[]>(Object.freeze([]), about, (value, name, problems) => {
    const items = value.split(',').flatMap((part) => part.trim() || []);
    const read = items.map((part) => item(part, name, problems, items.length === 1));
    return read.filter((found): found is T => found !== null);
  });
}

/** host:port, the port 1-65535; a host may be an IPv6 address in brackets. */
function hostPort(item: string, name: string, problems: string[]) {
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
  const port = Number(match?.[2]);
  if (match && port >= 1 && port <= 65535)
    return { host: (match[1] ?? '').replace(/^\[|\]$/g, ''), port };
  return refuse(problems, `${name}: "${item}" is not host:port (e.g. redis-1:6379)`, null);
}

function parseUrl(text: string): URL | null {
  return URL.canParse(text) ? new URL(text) : null;
}

/** Exactly scheme://host[:port], or `*` alone; `null` (sandboxed frames, file:// pages) by name. */
function origin(item: string, name: string, problems: string[], alone: boolean): string {
  if (item === 'null' || (item === '*' && alone) || parseUrl(item)?.origin === item) return item;
  const problem = `${name}: "${item}" is not an origin like https://app.example.com (or use "*" alone)`;
  return refuse(problems, problem, item);
}

/** An absolute `kind`(s) URL; `refuse` says what else it must not be. Never echoed: passwords. */
function url(
  kind: 'http' | 'redis',
  example: string,
  about: About & { refuse?: (url: URL) => string | null },
): Setting<URL | null> {
  const schemes = [kind, `${kind}s`];
  const what = kind === 'http' ? 'an absolute http(s) URL' : 'a redis:// or rediss:// URL';
  return setting<URL | null>(null, about, (value, name, problems) => {
    const parsed = parseUrl(value);
    const scheme = parsed?.protocol.slice(0, -1) ?? '';
    // `collector:4318` parses, with the scheme "collector": not a URL of another scheme.
    if (!parsed || (!parsed.host && !schemes.includes(scheme)))
      return refuse(problems, `${name} must be ${what}, e.g. ${example}`, null);
    const refused = schemes.includes(scheme)
      ? about.refuse?.(parsed)
      : `use ${schemes.join(' or ')} (got ${scheme})`;
    return refused ? refuse(problems, `${name} must ${refused}`, null) : parsed;
  });
}

/** A base URL's refusal: no credentials (`why` says why not), no query string, no fragment. */
const bareBase = (why: string) => (parsed: URL) =>
  parsed.username || parsed.password
    ? `not contain credentials${why}`
    : parsed.search || parsed.hash
      ? 'not have a query string or fragment'
      : null;

/** The service's URL: unset is undefined; `simulator` asks for the built-in one by name (null). */
const serviceUrl = url('http', 'https://sms.example.com', {
  doc: "the service's base URL (http/https, path kept, no credentials); unset or `simulator`: the demo simulator",
  // Credentials travel per request in the form body; in the URL they would be a static secret.
  refuse: bareBase('; clients send them per request'),
});
const upstreamUrl: Setting<URL | null | undefined> = {
  ...serviceUrl,
  fallback: undefined,
  parse: (value, name, problems) =>
    value === SIMULATOR_UPSTREAM ? null : serviceUrl.parse(value, name, problems),
};

const server = {
  NODE_ENV: text(null, {
    doc: '`production` refuses a missing `UPSTREAM_URL` or `GATEWAY_SECRET`, moves `/metrics` ([above](#mistakes-refused-at-start))',
  }),
  LOG_LEVEL: oneOf(LOG_LEVELS, 'info', {
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent` (JSON lines on stdout)',
  }),
  PORT: int(4000, 0, 65_535, { doc: 'port to listen on' }),
  HOST: text('0.0.0.0', { doc: 'interface to bind' }),
  KEEP_ALIVE_TIMEOUT_MS: int(65_000, 1_000, 3_600_000, {
    doc: "idle keep-alive connections stay open this long: keep it above the load balancer's idle timeout",
  }),
  // Instance ids land in log lines and metric labels: plain characters only, bounded.
  INSTANCE_ID: text(null, {
    doc: "this copy's name on every log line, span and metric (`service.instance.id`)",
    shown: code('<hostname>-<pid>'),
    must: [/^[A-Za-z0-9._:-]{1,128}$/, '1 to 128 letters, digits or ._:- characters'],
  }),
  CORS_ORIGINS: list(origin, {
    doc: 'comma-separated browser origins allowed (or `*`); unset: none (loopback in demo mode)',
  }),
  PERSISTED_OPERATIONS: text(null, {
    doc: 'path of an allow-list; when set, nothing else runs ([more](persisted-operations.md))',
  }),
  GRAPHIQL: onOff(null, {
    doc: "GraphiQL and introspection (`__schema`, `__type`; federation's `_service` stays); unset with `NODE_ENV=production`: `off`",
    shown: code('on'),
  }),
};

const upstream = {
  UPSTREAM_URL: upstreamUrl,
  UPSTREAM_TIMEOUT_MS: int(10_000, 1, 600_000, {
    doc: 'the whole wait for one upstream answer, retries and backoff included',
  }),
  UPSTREAM_HISTORY_END: oneOf(HISTORY_END_READINGS, 'exclusive', {
    doc: 'how the service reads `history_end`: `exclusive` or `inclusive` ([doctor](doctor.md) finds out)',
    hint: '; `npm run doctor` tells which the service uses',
  }),
  // 256: a 200-number fan-out goes in one wave (at 128: two round trips, p50 103 ms against 81).
  UPSTREAM_CONNECTIONS: int(256, 1, 10_000, {
    doc: 'keep-alive connections to the service: the hard cap of calls in flight',
  }),
};

const request = {
  MAX_BODY_BYTES: int(100_000, 100, 100_000_000, { doc: 'largest request body (HTTP 413 beyond)' }),
  MAX_ALIASES: int(30, 0, 10_000, { doc: 'aliases in one document' }),
  MAX_DEPTH: int(10, 1, 1_000, { doc: 'selection depth (introspection exempt)' }),
  MAX_QUERY_COST: int(100_000, 1, 1_000_000_000, {
    doc: 'items (objects, lists at their `@listSize`) an operation may return or fetch, estimated before execution',
  }),
  MAX_RESPONSE_BYTES: int(8 * MIB, KIB, GIB, {
    doc: 'bytes of data one answer may hold, counted while it is built ([ceiling](limits.md#response-byte-ceiling))',
  }),
  MAX_HISTORY_RANGE: int(1000, 1, 1_000_000, {
    doc: 'widest `history(start, end)` range, as `end - start`',
  }),
};

const cache = {
  CACHE_TTL_MS: int(0, 0, 86_400_000, {
    doc: 'how long the [response cache](cache.md) serves an answer, in ms; `0` turns it off',
  }),
  CACHE_STALE_IF_ERROR_MS: int(0, 0, 604_800_000, {
    doc: 'how long past its TTL an answer may stand in, marked stale ([stale-if-error](stale-if-error.md))',
  }),
  // Room for at least one answer of the largest size stored.
  CACHE_MAX_BYTES: int(64 * MIB, fixed.FIXED_CACHE_MAX_ENTRY_BYTES, 64 * GIB, {
    doc: 'memory the in-process cache may hold (LRU, fair between accounts); at least 1 MiB, its largest answer',
  }),
  REDIS_URL: url('redis', 'redis://redis:6379', {
    doc: 'Redis shared by the copies: cache, APQ hashes, [live updates](live-updates.md)',
  }),
  REDIS_SENTINELS: list(hostPort, {
    doc: 'Sentinel: `host:port,...` of the sentinels; `REDIS_URL` then gives only password, TLS and db ([deploy](deploy.md#redis-topologies))',
  }),
  REDIS_SENTINEL_NAME: text(null, {
    doc: "the primary's name at the sentinels",
    shown: code('mymaster'),
  }),
  REDIS_SENTINEL_PASSWORD: verbatim(0, {
    doc: "the sentinels' own password (their `requirepass`), if they have one; unset: they are asked without one",
  }),
  REDIS_CLUSTER_NODES: list(hostPort, {
    doc: "Redis Cluster: more seed nodes `host:port,...` besides `REDIS_URL`'s",
  }),
};

const secret = {
  GATEWAY_SECRET: verbatim(MIN_SECRET_LENGTH, {
    doc: 'secret (32+ chars) for cursors, resume tokens, account ids; required with `REDIS_URL` and in production',
  }),
  GATEWAY_SECRET_PREVIOUS: verbatim(MIN_SECRET_LENGTH, {
    doc: 'the secret before a rotation: cursors and resume tokens it signed are still accepted',
  }),
  CACHE_HMAC_KEY: verbatim(MIN_SECRET_LENGTH, {
    doc: 'former name of `GATEWAY_SECRET`, still read; both set and different stops start-up',
  }),
};

const live = {
  // Polling faster than every 100 ms would be hammering the service, not watching it.
  LIVE_POLL_MS: int(3_000, 100, 3_600_000, {
    doc: 'how often a watched number is polled, in ms (at least 100); `0` turns live updates off',
    zeroOff: true,
  }),
  LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT: int(50, 1, 100_000, {
    doc: 'live subscriptions one account may hold on one gateway copy',
  }),
  LIVE_MAX_SUBSCRIPTIONS: int(5_000, 1, 1_000_000, {
    doc: 'live subscriptions this copy holds in all',
  }),
  WS_MAX_CONNECTIONS: int(1_000, 1, 1_000_000, {
    doc: 'WebSocket connections this copy keeps open',
  }),
  GATEWAY_PUBLIC_URL: url('http', 'https://sms-gateway.example.com', {
    doc: "the gateway's address as the service reaches it, the start of `Number.doorbellUrl` ([doorbell](live-updates.md#the-doorbell))",
    refuse: bareBase(''),
  }),
};

const metrics = {
  METRICS: onOff(true, { doc: '`off` removes `/metrics`' }),
  // 0 (any free port) is refused: nobody could find it to scrape.
  METRICS_PORT: int(null, 1, 65_535, {
    doc:
      'serve `/metrics` on this port instead of the public one; unset with `NODE_ENV=production`: ' +
      code(DEFAULT_PRODUCTION_METRICS_PORT),
  }),
  METRICS_HOST: text(null, {
    doc: 'interface the metrics port listens on (e.g. a private address, `127.0.0.1` for a sidecar)',
    shown: code('HOST'),
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('http', 'http://otel-collector:4318', {
    doc: 'OTLP/HTTP collector base URL (`http://otel-collector:4318`); set turns tracing on',
  }),
  SHUTDOWN_READINESS_DELAY_MS: int(5_000, 0, 600_000, {
    doc: 'on SIGTERM, how long `/readiness` answers 503 while the copy still serves ([drain](deploy.md#shutdown))',
  }),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 100, 600_000, {
    doc: 'then, how long requests in flight may take before the process exits anyway',
  }),
};

const demo = {
  SIMULATOR_ARRIVALS_MS: int(0, 0, 3_600_000, {
    doc: 'demo mode: an inbound message arrives this often (for live updates)',
  }),
  SIMULATOR_LATENCY_MS: int(0, 0, 60_000, { doc: 'artificial latency of the built-in simulator' }),
};

/** Read by `npm run doctor` only, never by the gateway; both are secrets. */
export const DOCTOR_SETTINGS = {
  SMS_SYS_ID: text(null, { doc: "the account's `sys_id`, for the doctor" }),
  SMS_AUTH_TOKEN: text(null, { doc: "the account's `auth_token`, for the doctor" }),
};

/** docs/configuration.md's headings, each with the settings its table lists, in order. */
export const SECTIONS: Readonly<Record<string, Readonly<Record<string, Setting>>>> = {
  'The server': server,
  'The SMS service (upstream)': upstream,
  'What one request may ask': request,
  'Response cache and Redis': cache,
  'The secret': secret,
  'Live updates': live,
  'Metrics, tracing and shutdown': metrics,
  'Demo mode (the built-in simulator)': demo,
  'The doctor': DOCTOR_SETTINGS,
};

/** Every setting the gateway reads, in the order problems are listed. */
export const SETTINGS = {
  ...server,
  ...upstream,
  ...request,
  ...cache,
  ...secret,
  ...live,
  ...metrics,
  ...demo,
};
export const CONFIG_VARIABLES = Object.keys(SETTINGS) as readonly (keyof typeof SETTINGS)[];

/** FIXED_ constants that never were variables of that name: their former ones are listed below. */
const NEVER_VARIABLES = ['FIXED_UPSTREAM_ATTEMPT_TIMEOUT_PERCENT', 'FIXED_ADMISSION_MIN_SEATS'];

/** Former variables -> what they are fixed at (fixed.ts), as the line refusing one says it. */
export const RETIRED_VARIABLES: Readonly<Record<string, string>> = {
  UPSTREAM_ATTEMPT_TIMEOUT_MS: 'the whole UPSTREAM_TIMEOUT_MS',
  UPSTREAM_CONCURRENCY: 'none per request: the shared adaptive limit alone',
  ADMISSION_BUSY_CONCURRENCY: `none per account: at least ${fixed.FIXED_ADMISSION_MIN_SEATS} seats in all`,
  // Every other FIXED_<name> was the variable <name>.
  ...Object.fromEntries(
    Object.entries(fixed)
      .filter(([constant]) => !NEVER_VARIABLES.includes(constant))
      .map(([constant, value]) => [constant.slice('FIXED_'.length), String(value)]),
  ),
};

export type Env = Readonly<Record<string, string | undefined>>;
export type Values<S> = { [Name in keyof S]: S[Name] extends Setting<infer T> ? T : never };

/** Each of `settings` read from `env`, in order; a bad value adds a problem and reads as its fallback. */
export function readSettings<S extends Record<string, Setting>>(
  settings: S,
  env: Env,
  problems: string[],
): Values<S> {
  const values: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(settings)) {
    const raw = setting.verbatim ? env[name] : env[name]?.trim();
    values[name] = raw ? setting.parse(raw, name, problems) : setting.fallback;
  }
  return values as Values<S>;
}
