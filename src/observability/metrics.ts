/**
 * Prometheus metrics, served at /metrics: GraphQL requests and their durations per operation,
 * HTTP durations, upstream attempts (count, duration, outcome) per upstream operation, the
 * circuit breaker's state, response-cache hits and stale answers served. One registry per gateway, so several
 * gateways in one process (tests) never share series.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BreakerState, ConcurrencySnapshot, UpstreamObserver } from '../core/signals.js';
import type { Outcome } from './outcome.js';

/** Whose operation names may become labels: see operationLabel below. */
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

export interface GatewayMetrics {
  readonly registry: Registry;
  /** Feed to the upstream client: one observation per attempt. */
  readonly upstream: UpstreamObserver;
  cacheLookup(result: 'hit' | 'miss'): void;
  /** A failed answer replaced by a stale cached one; `code` is the error that failed it. */
  staleServed(code: string): void;
  /** Reports the breaker's state at each scrape. */
  watchBreaker(state: () => BreakerState): void;
  /** Reports the adaptive limit, calls in flight and calls waiting at each scrape. */
  watchConcurrency(snapshot: () => ConcurrencySnapshot): void;
  /** Reports accounts with an open breaker and accounts inside a 429 window at each scrape. */
  watchAccounts(counts: () => { readonly breakerOpen: number; readonly rateLimited: number }): void;
  /** Reports admission at each scrape: requests waiting, seats, the loop's utilization. */
  watchAdmission(state: () => AdmissionState): void;
  /** How long a GraphQL request waited for a seat before it ran (0 when it ran at once). */
  admissionWaited(seconds: number): void;
  /** A request refused by admission (src/traffic/fair-admission.ts), by the kind of tenant. */
  admissionRefused(kind: 'account' | 'unverified' | 'anonymous'): void;
  /** An APQ lookup: a hash known, unknown, or a document registered. */
  apqRequest(result: 'hit' | 'miss' | 'registered'): void;
  /** Reports live subscriptions held and numbers watched by this copy at each scrape. */
  watchLive(stats: () => { readonly topics: number; readonly subscriptions: number }): void;
  /** Reports at each scrape whether the Redis of one use answers (sms_redis_up). */
  watchRedis(use: string, up: () => boolean): void;
  /** Reports the in-memory response cache's bytes at each scrape (sms_response_cache_bytes). */
  watchCacheBytes(bytes: () => number): void;
  watchLive(stats: () => LiveStats): void;
  /** Feed to the live hub: polls, takeovers, subscribers dropped. */
  readonly live: {
    published(count: number): void;
    pollFailed(): void;
    takeover(): void;
    dropped(reason: 'slow' | 'resync'): void;
  };
  /** One GraphQL operation answered (src/http/plugins/observe-requests.ts). */
  operationDone(operation: OperationRecord): void;
  /** An operation's cost as estimated before it ran, in items (src/graph/estimate-cost.ts). */
  costEstimated(items: number): void;
  /** The same operation's actual cost once answered: the objects its answer held. */
  costActual(items: number): void;
  /** One GraphQL request answered, cached or not, with its outcome: sms_graphql_requests_total. */
  requestDone(request: RequestRecord): void;
  /** One HTTP request to the GraphQL endpoint answered. */
  httpDone(method: string, status: number, seconds: number): void;
  /** The text a scrape of /metrics gets. */
  exposition(): Promise<{ readonly contentType: string; readonly body: string }>;
}

interface AdmissionState {
  readonly waiting: number;
  /** Requests that may run now; Infinity while the loop has room. */
  readonly seats: number;
  readonly utilization: number;
}

interface LiveStats {
  readonly topics: number;
  readonly subscriptions: number;
  /** Poll locks this copy holds (numbers it polls); without Redis, every topic. */
  readonly locksHeld?: number;
}

/** Items: a single object, a page, a fan-out, the default MAX_QUERY_COST, far past it. */
const COST_BUCKETS = [1, 10, 100, 1_000, 5_000, 10_000, 25_000, 50_000, 100_000, 1_000_000];
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/**
 * Operation names come from clients: past this many distinct names, new ones are counted as
 * "other", so a client cannot grow the metrics without bound. (Written here because the
 * prometheus plugin labels with whatever name a client sends.)
 */
export const MAX_OPERATION_NAMES = 200;
/**
 * Of those, at most this many may come from callers the service has not accepted (anonymous
 * ones, wrong credentials): a stream of junk names from anyone leaves room for the names of the
 * accounts' own operations.
 */
export const MAX_UNTRUSTED_OPERATION_NAMES = 100;

export interface MetricsOptions {
  /** This copy's name, on every series as `instance_id` (src/app.ts gives INSTANCE_ID). @default none */
  readonly instanceId?: string;
  /** The gateway's version, on sms_instance_info. @default "unknown" */
  readonly version?: string;
}

export function createMetrics(options: MetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  // Every series names its copy, so a fleet's series stay apart even where the scraper's own
  // `instance` label (an address) is rewritten or shared behind a proxy.
  // (Only when named: tests and embedders without one keep the bare label sets.)
  if (options.instanceId) registry.setDefaultLabels({ instance_id: options.instanceId });
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'sms_instance_info',
    help: 'Always 1: this copy (instance_id) and the version it runs.',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: options.version ?? 'unknown' }, 1);
  const redisUp = new Map<string, () => boolean>();
  new Gauge({
    name: 'sms_redis_up',
    help: 'Per use of Redis (cache, apq, live): 1 while connected and answering, 0 while not.',
    labelNames: ['use'],
    registers: [registry],
    collect() {
      for (const [use, up] of redisUp) this.set({ use }, up() ? 1 : 0);
    },
  });
  let cacheBytes: (() => number) | undefined;
  new Gauge({
    name: 'sms_response_cache_bytes',
    help: 'Bytes the in-memory response cache holds, against CACHE_MAX_BYTES (0 with Redis or the cache off).',
    registers: [registry],
    collect() {
      this.set(cacheBytes?.() ?? 0);
    },
  });

  const joined = new Counter({
    name: 'sms_upstream_calls_joined_total',
    help: 'Calls answered by an identical call already in flight (same credentials, operation and arguments) instead of being sent.',
    labelNames: ['operation'],
    registers: [registry],
  });
  const upstreamCalls = new Counter({
    name: 'sms_upstream_requests_total',
    help: 'Attempts at upstream operations, by operation and outcome (ok or the error code).',
    labelNames: ['operation', 'outcome'],
    registers: [registry],
  });
  const upstreamDuration = new Histogram({
    name: 'sms_upstream_request_duration_seconds',
    help: 'Duration of upstream attempts, by operation.',
    labelNames: ['operation'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const cache = new Counter({
    name: 'sms_response_cache_lookups_total',
    help: 'Response cache lookups, by result (hit or miss).',
    labelNames: ['result'],
    registers: [registry],
  });
  const stale = new Counter({
    name: 'sms_response_cache_stale_total',
    help: 'Answers served stale from the response cache because the service failed, by the error code it failed with.',
    labelNames: ['code'],
    registers: [registry],
  });
  let breakerState: (() => BreakerState) | undefined;
  new Gauge({
    name: 'sms_upstream_circuit_open',
    help: '1 while the upstream circuit breaker is open or half-open, else 0.',
    registers: [registry],
    collect() {
      this.set(breakerState && breakerState() !== 'closed' ? 1 : 0);
    },
  });

  let concurrency: (() => ConcurrencySnapshot) | undefined;
  new Gauge({
    name: 'sms_upstream_concurrency',
    help: 'Calls to the service: the adaptive limit, those in flight and those waiting for a slot.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const now = concurrency?.();
      if (!now) return;
      this.set({ kind: 'limit' }, now.limit);
      this.set({ kind: 'in_flight' }, now.inFlight);
      this.set({ kind: 'waiting' }, now.waiting);
    },
  });
  let live: (() => LiveStats) | undefined;
  new Gauge({
    name: 'sms_live_subscriptions',
    help: 'Live subscriptions open on this copy (kind subscriptions), and the numbers they watch (kind topics: one poll loop or pub/sub listener each).',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const now = live?.();
      if (!now) return;
      this.set({ kind: 'subscriptions' }, now.subscriptions);
      this.set({ kind: 'topics' }, now.topics);
    },
  });
  let accounts: (() => { readonly breakerOpen: number; readonly rateLimited: number }) | undefined;
  new Gauge({
    name: 'sms_upstream_accounts_breaker_open',
    help: 'Accounts (sys_ids) whose own breaker is open or half-open on this copy.',
    registers: [registry],
    collect() {
      this.set(accounts?.().breakerOpen ?? 0);
    },
  });
  new Gauge({
    name: 'sms_upstream_accounts_rate_limited',
    help: 'Accounts (sys_ids) inside a 429 window the service set, on this copy.',
    registers: [registry],
    collect() {
      this.set(accounts?.().rateLimited ?? 0);
    },
  });
  let admission: (() => AdmissionState) | undefined;
  new Gauge({
    name: 'sms_admission_waiting',
    help: 'GraphQL requests waiting for a seat (the event loop is busy), all accounts together.',
    registers: [registry],
    collect() {
      this.set(admission?.().waiting ?? 0);
    },
  });
  new Gauge({
    name: 'sms_admission_seats',
    help: 'GraphQL requests that may run at once while the event loop is busy (-1: no limit, it has room).',
    registers: [registry],
    collect() {
      const seats = admission?.().seats ?? Number.POSITIVE_INFINITY;
      this.set(Number.isFinite(seats) ? seats : -1);
    },
  });
  new Gauge({
    name: 'sms_event_loop_utilization',
    help: 'Share of the last 100 ms the event loop spent running code (0 to 1).',
    registers: [registry],
    collect() {
      this.set(admission?.().utilization ?? 0);
    },
  });
  const admissionWait = new Histogram({
    name: 'sms_admission_wait_seconds',
    help: 'Time GraphQL requests waited for a seat before running (part of graphql_yoga_http_duration).',
    buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const admissionRefusals = new Counter({
    name: 'sms_admission_refused_total',
    help: 'GraphQL requests refused with 429 while waiting their turn, by kind of tenant.',
    labelNames: ['tenant'],
    registers: [registry],
  });
  const apq = new Counter({
    name: 'sms_apq_requests_total',
    help: 'Automatic persisted query lookups, by result (hit, miss, registered).',
    labelNames: ['result'],
    registers: [registry],
  });
  new Gauge({
    name: 'sms_live_poll_locks_held',
    help: 'Numbers this copy polls now (with Redis: poll locks it holds).',
    registers: [registry],
    collect() {
      const now = live?.();
      if (now?.locksHeld !== undefined) this.set(now.locksHeld);
    },
  });
  const livePollFailures = new Counter({
    name: 'sms_live_poll_failures_total',
    help: 'Live polls of the service that failed.',
    registers: [registry],
  });
  const liveEvents = new Counter({
    name: 'sms_live_events_published_total',
    help: 'Live events found by this copy and published to subscribers (on every copy).',
    registers: [registry],
  });
  const liveTakeovers = new Counter({
    name: 'sms_live_takeovers_total',
    help: 'Numbers this copy took over polling from a copy that stopped renewing its lock.',
    registers: [registry],
  });
  const liveDropped = new Counter({
    name: 'sms_live_subscribers_dropped_total',
    help: 'Live subscribers ended by the gateway: slow (fell behind: SLOW_CONSUMER) or resync (RESYNC_REQUIRED).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'sms_upstream_refused_total',
    help: 'Calls refused without reaching the service, by reason (rate_limited, account_breaker, service_breaker, refused_credentials).',
    labelNames: ['reason'],
    registers: [registry],
  });

  const seenNames = new Set<string>();
  let untrustedNames = 0;
  /**
   * The label for an operation's name: only names of operations that validated (a request
   * refused at parsing or validation may name anything), and only within the budgets above.
   */
  const operationName = ({ name, validated, trusted }: NameSource): string => {
    if (!validated) return 'unvalidated';
    if (!name) return 'anonymous';
    if (seenNames.has(name)) return name;
    if (seenNames.size >= MAX_OPERATION_NAMES) return 'other';
    if (!trusted()) {
      if (untrustedNames >= MAX_UNTRUSTED_OPERATION_NAMES) return 'other';
      untrustedNames += 1;
    }
    seenNames.add(name);
    return name;
  };
  const requests = new Counter({
    name: 'sms_graphql_requests_total',
    help: 'GraphQL requests over HTTP, each counted once whether executed or answered from the response cache, by operation, outcome (ok, client_error, error), error code (none when ok) and cached (true, false).',
    labelNames: ['operationName', 'outcome', 'code', 'cached'],
    registers: [registry],
  });
  const requestChildren = new Map<string, ReturnType<typeof requests.labels>>();
  // The GraphQL request metrics the yoga/envelop Prometheus plugin used to record, under the same
  // names, recorded once per request by src/http/plugins/observe-requests.ts: that plugin's hooks
  // (several per request, each spreading and filtering label objects) cost more than the rest of
  // the request's bookkeeping together. Label children are cached: a few operations and statuses.
  const operations = new Counter({
    name: 'graphql_envelop_request',
    help: 'GraphQL operations executed, by operation.',
    labelNames: ['operationType', 'operationName'],
    registers: [registry],
  });
  const operationDuration = new Histogram({
    name: 'graphql_envelop_request_duration',
    help: 'Duration of GraphQL operations (arrival to response), in seconds, by operation.',
    labelNames: ['operationType', 'operationName'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const operationErrors = new Counter({
    name: 'graphql_envelop_error_result',
    help: 'GraphQL results with errors, by phase (parse, validate, execute) and operation.',
    labelNames: ['phase', 'operationName'],
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'graphql_yoga_http_duration',
    help: 'Duration of HTTP requests to the GraphQL endpoint, in seconds, by status.',
    labelNames: ['method', 'statusCode'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  // Estimate and actual side by side, in one unit, so an operator sees how far the list sizes the
  // schema assumes (cost.ts) are from what accounts really hold.
  const costEstimated = new Histogram({
    name: 'graphql_operation_cost_estimated',
    help: 'Cost of each operation as estimated before it ran (MAX_QUERY_COST), in items: objects the answer may hold, lists at their stated sizes.',
    buckets: COST_BUCKETS,
    registers: [registry],
  });
  const costActual = new Histogram({
    name: 'graphql_operation_cost_actual',
    help: 'Cost of each operation once answered, in items: objects its answer held.',
    buckets: COST_BUCKETS,
    registers: [registry],
  });
  const operationChildren = new Map<
    string,
    {
      count: ReturnType<typeof operations.labels>;
      duration: ReturnType<typeof operationDuration.labels>;
    }
  >();
  const httpChildren = new Map<string, ReturnType<typeof httpDuration.labels>>();

  return {
    registry,
    upstream: {
      attempt(operation, seconds, outcome) {
        upstreamCalls.inc({ operation, outcome });
        upstreamDuration.observe({ operation }, seconds);
      },
      refused(reason) {
        refused.inc({ reason });
      },
      joined(operation) {
        joined.inc({ operation });
      },
    },
    cacheLookup(result) {
      cache.inc({ result });
    },
    staleServed(code) {
      stale.inc({ code });
    },
    watchBreaker(state) {
      breakerState = state;
    },
    watchConcurrency(snapshot) {
      concurrency = snapshot;
    },
    watchAccounts(counts) {
      accounts = counts;
    },
    watchAdmission(state) {
      admission = state;
    },
    admissionWaited(seconds) {
      admissionWait.observe(seconds);
    },
    admissionRefused(kind) {
      admissionRefusals.inc({ tenant: kind });
    },
    apqRequest(result) {
      apq.inc({ result });
    },
    watchLive(stats) {
      live = stats;
    },
    watchRedis(use, up) {
      redisUp.set(use, up);
    },
    watchCacheBytes(bytes) {
      cacheBytes = bytes;
    },
    live: {
      published: (count) => liveEvents.inc(count),
      pollFailed: () => livePollFailures.inc(),
      takeover: () => liveTakeovers.inc(),
      dropped: (reason) => liveDropped.inc({ reason }),
    },
    operationDone(operation) {
      const { type, seconds, errorPhase } = operation;
      const label = operationName(operation);
      if (errorPhase) operationErrors.inc({ phase: errorPhase, operationName: label });
      // Refused before it ran (parse, validation): an error, not an operation executed.
      if (type === 'unknown') return;
      const key = `${type}\u0000${label}`;
      let children = operationChildren.get(key);
      if (!children) {
        const labels = { operationType: type, operationName: label };
        children = { count: operations.labels(labels), duration: operationDuration.labels(labels) };
        operationChildren.set(key, children);
      }
      children.count.inc();
      children.duration.observe(seconds);
    },
    costEstimated(items) {
      costEstimated.observe(items);
    },
    costActual(items) {
      costActual.observe(items);
    },
    requestDone(request) {
      const { outcome, code, cached } = request;
      const name = operationName(request);
      const key = `${name}\u0000${outcome}\u0000${code}\u0000${cached}`;
      let child = requestChildren.get(key);
      if (!child) {
        // Names are bounded above, outcomes and codes by ErrorCode: bounded without a cap.
        child = requests.labels({ operationName: name, outcome, code, cached: String(cached) });
        requestChildren.set(key, child);
      }
      child.inc();
    },
    httpDone(method, status, seconds) {
      const key = `${method} ${status}`;
      let child = httpChildren.get(key);
      if (!child) {
        // Methods and statuses are few (GET/POST, a dozen codes): bounded without a cap.
        child = httpDuration.labels({ method, statusCode: String(status) });
        httpChildren.set(key, child);
      }
      child.observe(seconds);
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
