/**
 * Prometheus metrics, served at /metrics: one row of METRICS per metric, fed by the hooks of
 * GatewayMetrics. One registry per gateway, so gateways in one process (tests) share no series.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BreakerState, ConcurrencySnapshot, UpstreamObserver } from '../core/signals.js';
import type { Outcome } from './outcome.js';

/** Whose operation names may become labels: see operationNames below. */
export interface NameSource {
  readonly name: string | undefined;
  /** The operation passed validation (it ran, or its answer came from the response cache). */
  readonly validated: boolean;
  /** The caller's credentials are ones the service accepted lately (asked only for a new name). */
  readonly trusted: () => boolean;
}

export interface OperationRecord extends NameSource {
  /** query, mutation or subscription; "unknown" when it never got that far. */
  readonly type: string;
  readonly seconds: number;
  /** Set when the result carried errors: where they arose. */
  readonly errorPhase?: 'parse' | 'validate' | 'execute';
}

/** One GraphQL request over HTTP, whatever answered it (execution or the response cache). */
export interface RequestRecord extends NameSource, Outcome {
  readonly cached: boolean;
}

/** The hooks that feed the metrics, and the registry they are in. */
export type GatewayMetrics = ReturnType<typeof createMetrics>;

/** Items: a single object, a page, a fan-out, the default MAX_QUERY_COST, far past it. */
const COST_BUCKETS = [1, 10, 100, 1_000, 5_000, 10_000, 25_000, 50_000, 100_000, 1_000_000];
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type MetricSpec = {
  readonly labels?: readonly string[];
  readonly help: string;
} & (
  | { readonly type: 'counter' | 'gauge' }
  | { readonly type: 'histogram'; readonly buckets: readonly number[] }
);

/**
 * Every metric besides Node's process metrics. Dashboards and alert rules (docs/alerts/) depend on
 * these names, types, labels and help texts; docs/observability.md lists exactly these names.
 */
// prettier-ignore
export const METRICS = {
  // GraphQL requests. The graphql_* names are the yoga/envelop Prometheus plugin's, kept; recorded
  // by src/http/plugins/observe-requests.ts (the plugin's hooks cost more than all the rest).
  sms_graphql_requests_total: { type: 'counter', labels: ['operationName', 'outcome', 'code', 'cached'],
    help: 'GraphQL requests over HTTP, each counted once whether executed or answered from the response cache, by operation, outcome (ok, client_error, error), error code (none when ok) and cached (true, false).' },
  graphql_envelop_request: { type: 'counter', labels: ['operationType', 'operationName'],
    help: 'GraphQL operations executed, by operation.' },
  graphql_envelop_request_duration: { type: 'histogram', buckets: LATENCY_BUCKETS, labels: ['operationType', 'operationName'],
    help: 'Duration of GraphQL operations (arrival to response), in seconds, by operation.' },
  graphql_envelop_error_result: { type: 'counter', labels: ['phase', 'operationName'],
    help: 'GraphQL results with errors, by phase (parse, validate, execute) and operation.' },
  graphql_yoga_http_duration: { type: 'histogram', buckets: LATENCY_BUCKETS, labels: ['method', 'statusCode'],
    help: 'Duration of HTTP requests to the GraphQL endpoint, in seconds, by status.' },
  // Estimate and actual in one unit: how far the list sizes cost.ts assumes are from real accounts.
  graphql_operation_cost_estimated: { type: 'histogram', buckets: COST_BUCKETS,
    help: 'Cost of each operation as estimated before it ran (MAX_QUERY_COST), in items: objects the answer may hold, lists at their stated sizes.' },
  graphql_operation_cost_actual: { type: 'histogram', buckets: COST_BUCKETS,
    help: 'Cost of each operation once answered, in items: objects its answer held.' },

  // Admission (src/traffic/fair-admission.ts): how busy the loop is and who waits for it.
  sms_event_loop_utilization: { type: 'gauge',
    help: 'Share of the last 100 ms the event loop spent running code (0 to 1).' },
  sms_admission_seats: { type: 'gauge',
    help: 'GraphQL requests that may run at once while the event loop is busy (-1: no limit, it has room).' },
  sms_admission_waiting: { type: 'gauge',
    help: 'GraphQL requests waiting for a seat (the event loop is busy), all accounts together.' },
  sms_admission_wait_seconds: { type: 'histogram', buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 5],
    help: 'Time GraphQL requests waited for a seat before running (part of graphql_yoga_http_duration).' },
  sms_admission_refused_total: { type: 'counter', labels: ['tenant'],
    help: 'GraphQL requests refused with 429 while waiting their turn, by kind of tenant.' },

  // The service upstream.
  sms_upstream_requests_total: { type: 'counter', labels: ['operation', 'outcome'],
    help: 'Attempts at upstream operations, by operation and outcome (ok or the error code).' },
  sms_upstream_request_duration_seconds: { type: 'histogram', buckets: LATENCY_BUCKETS, labels: ['operation'],
    help: 'Duration of upstream attempts, by operation.' },
  sms_upstream_refused_total: { type: 'counter', labels: ['reason'],
    help: 'Calls refused without reaching the service, by reason (rate_limited, account_breaker, service_breaker, refused_credentials).' },
  sms_upstream_calls_joined_total: { type: 'counter', labels: ['operation'],
    help: 'Calls answered by an identical call already in flight (same credentials, operation and arguments) instead of being sent.' },
  sms_upstream_circuit_open: { type: 'gauge',
    help: '1 while the upstream circuit breaker is open or half-open, else 0.' },
  sms_upstream_concurrency: { type: 'gauge', labels: ['kind'],
    help: 'Calls to the service: the adaptive limit, those in flight and those waiting for a slot.' },
  sms_upstream_accounts_breaker_open: { type: 'gauge',
    help: 'Accounts (sys_ids) whose own breaker is open or half-open on this copy.' },
  sms_upstream_accounts_rate_limited: { type: 'gauge',
    help: 'Accounts (sys_ids) inside a 429 window the service set, on this copy.' },

  // Caches: the response cache and automatic persisted queries.
  sms_response_cache_lookups_total: { type: 'counter', labels: ['result'],
    help: 'Response cache lookups, by result (hit or miss).' },
  sms_response_cache_stale_total: { type: 'counter', labels: ['code'],
    help: 'Answers served stale from the response cache because the service failed, by the error code it failed with.' },
  sms_response_cache_bytes: { type: 'gauge',
    help: 'Bytes the in-memory response cache holds, against CACHE_MAX_BYTES (0 with Redis or the cache off).' },
  sms_apq_requests_total: { type: 'counter', labels: ['result'],
    help: 'Automatic persisted query lookups, by result (hit, miss, registered).' },

  // Live updates.
  sms_live_subscriptions: { type: 'gauge', labels: ['kind'],
    help: 'Live subscriptions open on this copy (kind subscriptions), and the numbers they watch (kind topics: one poll loop or pub/sub listener each).' },
  sms_live_poll_locks_held: { type: 'gauge',
    help: 'Numbers this copy polls now (with Redis: poll locks it holds).' },
  sms_live_poll_failures_total: { type: 'counter',
    help: 'Live polls of the service that failed.' },
  sms_live_events_published_total: { type: 'counter',
    help: 'Live events found by this copy and published to subscribers (on every copy).' },
  sms_live_takeovers_total: { type: 'counter',
    help: 'Numbers this copy took over polling from a copy that stopped renewing its lock.' },
  sms_live_subscribers_dropped_total: { type: 'counter', labels: ['reason'],
    help: 'Live subscribers ended by the gateway: slow (fell behind: SLOW_CONSUMER) or resync (RESYNC_REQUIRED).' },

  // The fleet: which copy, which version, which Redis answers.
  sms_instance_info: { type: 'gauge', labels: ['version', 'commit', 'built_at'],
    help: 'Always 1: this copy (instance_id) and what it runs: version, commit, build time.' },
  sms_redis_up: { type: 'gauge', labels: ['use'],
    help: 'Per use of Redis (cache, apq, live): 1 while connected and answering, 0 while not.' },
} as const satisfies Record<string, MetricSpec>;

type MetricName = keyof typeof METRICS;
type GaugeName = {
  [N in MetricName]: (typeof METRICS)[N]['type'] extends 'gauge' ? N : never;
}[MetricName];
type Made = { counter: Counter; gauge: Gauge; histogram: Histogram };
type Metrics = { readonly [N in MetricName]: Made[(typeof METRICS)[N]['type']] };

/** What the gauges read at each scrape, from the part that knows it. */
export interface Watched {
  readonly breaker?: () => BreakerState;
  readonly concurrency?: () => ConcurrencySnapshot;
  readonly accounts?: () => { readonly breakerOpen: number; readonly rateLimited: number };
  /** `seats`: requests that may run now, Infinity while the loop has room. */
  readonly admission?: () => {
    readonly waiting: number;
    readonly seats: number;
    readonly utilization: number;
  };
  /** `locksHeld`: poll locks this copy holds (numbers it polls); without Redis, every topic. */
  readonly live?: () => {
    readonly topics: number;
    readonly subscriptions: number;
    readonly locksHeld?: number;
  };
  readonly cacheBytes?: () => number;
  /** Whether the Redis of each use answers. */
  readonly redis?: Readonly<Record<string, () => boolean>>;
}

/** A gauge's value, or one per value of its one label, or nothing (left as it was). */
type Scraped = number | Readonly<Record<string, number>> | undefined;

const SCRAPED: { readonly [N in GaugeName]?: (watched: Watched) => Scraped } = {
  sms_event_loop_utilization: ({ admission }) => admission?.().utilization ?? 0,
  sms_admission_seats({ admission }) {
    const seats = admission?.().seats ?? Number.POSITIVE_INFINITY;
    return Number.isFinite(seats) ? seats : -1;
  },
  sms_admission_waiting: ({ admission }) => admission?.().waiting ?? 0,
  sms_upstream_circuit_open: ({ breaker }) => (breaker && breaker() !== 'closed' ? 1 : 0),
  sms_upstream_concurrency({ concurrency }) {
    const now = concurrency?.();
    return now && { limit: now.limit, in_flight: now.inFlight, waiting: now.waiting };
  },
  sms_upstream_accounts_breaker_open: ({ accounts }) => accounts?.().breakerOpen ?? 0,
  sms_upstream_accounts_rate_limited: ({ accounts }) => accounts?.().rateLimited ?? 0,
  sms_response_cache_bytes: ({ cacheBytes }) => cacheBytes?.() ?? 0,
  sms_live_subscriptions({ live }) {
    const now = live?.();
    return now && { subscriptions: now.subscriptions, topics: now.topics };
  },
  sms_live_poll_locks_held: ({ live }) => live?.().locksHeld,
  sms_redis_up: ({ redis = {} }) =>
    Object.fromEntries(Object.entries(redis).map(([use, up]) => [use, up() ? 1 : 0])),
};

/** The prom-client object of one row of METRICS, registered in `registry`. */
function make(name: MetricName, spec: MetricSpec, registry: Registry, watched: () => Watched) {
  const labelNames = spec.labels ?? [];
  const base = { name, help: spec.help, labelNames, registers: [registry] };
  if (spec.type === 'counter') return new Counter(base);
  if (spec.type === 'histogram') return new Histogram({ ...base, buckets: [...spec.buckets] });
  const scrape = SCRAPED[name as GaugeName];
  if (!scrape) return new Gauge(base);
  return new Gauge({
    ...base,
    collect() {
      const value = scrape(watched());
      if (typeof value === 'number') return this.set(value);
      const [label = ''] = labelNames;
      for (const [key, v] of Object.entries(value ?? {})) this.set({ [label]: key }, v);
    },
  });
}

/** Distinct operation names (they come from clients) labelled; later ones are "other". */
export const MAX_OPERATION_NAMES = 200;
/** Of those, at most this many from callers the service has not accepted, so junk leaves room. */
const MAX_UNTRUSTED_OPERATION_NAMES = 100;

export interface MetricsOptions {
  /** This copy's name, on every series as `instance_id` (INSTANCE_ID). @default none */
  readonly instanceId?: string;
  /** The gateway's version, on sms_instance_info. @default "unknown" */
  readonly version?: string;
  /** The commit it was built from, on sms_instance_info (a rollout's progress). @default "unknown" */
  readonly commit?: string;
  /** When it was built, on sms_instance_info as `built_at`. @default "unknown" */
  readonly builtAt?: string;
}

/** The label for an operation's name: only if it validated, and only within the budgets above. */
function operationNames(): (source: NameSource) => string {
  const seen = new Set<string>();
  let untrusted = 0;
  return ({ name, validated, trusted }) => {
    if (!validated) return 'unvalidated';
    if (!name) return 'anonymous';
    if (seen.has(name)) return name;
    if (seen.size >= MAX_OPERATION_NAMES) return 'other';
    if (!trusted()) {
      if (untrusted >= MAX_UNTRUSTED_OPERATION_NAMES) return 'other';
      untrusted += 1;
    }
    seen.add(name);
    return name;
  };
}

type CounterChild = ReturnType<Counter['labels']>;
type HistogramChild = ReturnType<Histogram['labels']>;

/** The label child of `key`, made once: prom-client's label objects per call cost too much. */
function child<T>(children: Map<string, T>, key: string, make: () => T): T {
  let found = children.get(key);
  if (found === undefined) children.set(key, (found = make()));
  return found;
}

export function createMetrics(options: MetricsOptions = {}) {
  const registry = new Registry();
  // Every series names its copy: the scraper's `instance` (an address) may be rewritten or shared.
  if (options.instanceId) registry.setDefaultLabels({ instance_id: options.instanceId });
  collectDefaultMetrics({ register: registry });
  let watched: Watched = {};
  const rows = Object.entries(METRICS) as [MetricName, MetricSpec][];
  const m = Object.fromEntries(
    rows.map(([name, spec]) => [name, make(name, spec, registry, () => watched)]),
  ) as Metrics;
  const { version = 'unknown', commit = 'unknown', builtAt = 'unknown' } = options;
  m.sms_instance_info.set({ version, commit, built_at: builtAt }, 1);

  const names = operationNames();
  // Label children by key: a few operations, statuses and codes (names bounded above).
  const operationChildren = new Map<string, { count: CounterChild; duration: HistogramChild }>();
  const requestChildren = new Map<string, CounterChild>();
  const httpChildren = new Map<string, HistogramChild>();

  return {
    registry,
    /** Feed to the upstream client: one observation per attempt. */
    upstream: {
      attempt(operation, seconds, outcome) {
        m.sms_upstream_requests_total.inc({ operation, outcome });
        m.sms_upstream_request_duration_seconds.observe({ operation }, seconds);
      },
      refused: (reason) => m.sms_upstream_refused_total.inc({ reason }),
      joined: (operation) => m.sms_upstream_calls_joined_total.inc({ operation }),
    } satisfies UpstreamObserver,
    cacheLookup: (result: 'hit' | 'miss') => m.sms_response_cache_lookups_total.inc({ result }),
    /** A failed answer replaced by a stale cached one; `code` is the error that failed it. */
    staleServed: (code: string) => m.sms_response_cache_stale_total.inc({ code }),
    /** Where the gauges read what they report, at each scrape (a source given again replaces it). */
    watch(sources: Watched): void {
      watched = { ...watched, ...sources, redis: { ...watched.redis, ...sources.redis } };
    },
    /** How long a GraphQL request waited for a seat before it ran (0 when it ran at once). */
    admissionWaited: (seconds: number) => m.sms_admission_wait_seconds.observe(seconds),
    /** A request refused by admission (src/traffic/fair-admission.ts), by the kind of tenant. */
    admissionRefused: (tenant: 'account' | 'unverified' | 'anonymous') =>
      m.sms_admission_refused_total.inc({ tenant }),
    apqRequest: (result: 'hit' | 'miss' | 'registered') => m.sms_apq_requests_total.inc({ result }),
    live: {
      published: (count: number) => m.sms_live_events_published_total.inc(count),
      pollFailed: () => m.sms_live_poll_failures_total.inc(),
      takeover: () => m.sms_live_takeovers_total.inc(),
      dropped: (reason: 'slow' | 'resync') => m.sms_live_subscribers_dropped_total.inc({ reason }),
    },
    /** One GraphQL operation answered (src/http/plugins/observe-requests.ts). */
    operationDone(operation: OperationRecord): void {
      const { type, seconds, errorPhase } = operation;
      const operationName = names(operation);
      if (errorPhase) m.graphql_envelop_error_result.inc({ phase: errorPhase, operationName });
      // Refused before it ran (parse, validation): an error, not an operation executed.
      if (type === 'unknown') return;
      const ran = child(operationChildren, `${type}\u0000${operationName}`, () => {
        const labels = { operationType: type, operationName };
        return {
          count: m.graphql_envelop_request.labels(labels),
          duration: m.graphql_envelop_request_duration.labels(labels),
        };
      });
      ran.count.inc();
      ran.duration.observe(seconds);
    },
    /** An operation's cost as estimated before it ran, in items (src/graph/estimate-cost.ts). */
    costEstimated: (items: number) => m.graphql_operation_cost_estimated.observe(items),
    /** The objects its answer held. */
    costActual: (items: number) => m.graphql_operation_cost_actual.observe(items),
    /** One GraphQL request answered, cached or not, with its outcome. */
    requestDone(request: RequestRecord): void {
      const { outcome, code, cached } = request;
      const operationName = names(request);
      const key = `${operationName}\u0000${outcome}\u0000${code}\u0000${cached}`;
      const labels = () => ({ operationName, outcome, code, cached: String(cached) });
      child(requestChildren, key, () => m.sms_graphql_requests_total.labels(labels())).inc();
    },
    httpDone(method: string, status: number, seconds: number): void {
      const make = () =>
        m.graphql_yoga_http_duration.labels({ method, statusCode: String(status) });
      child(httpChildren, `${method} ${status}`, make).observe(seconds);
    },
    async exposition(): Promise<{ readonly contentType: string; readonly body: string }> {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
