/**
 * The metrics table (src/observability/metrics.ts): the registry exports exactly its rows, with
 * their types, labels, help and buckets; every row is fed by a hook of GatewayMetrics; and
 * docs/observability.md, with the pages it links, lists exactly its names.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { METRICS, createMetrics, type GatewayMetrics } from '../../src/observability/metrics.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const rows = Object.entries(METRICS).map(([name, spec]) => ({ name, ...spec }));
const tableNames = rows.map((row) => row.name).sort();

/** Node's process metrics, which the registry carries besides the table. */
function defaultMetricNames(): Set<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return new Set(registry.getMetricsAsArray().map((metric) => metric.name));
}

/** The series lines of a scrape, without HELP and TYPE. */
async function seriesOf(metrics: GatewayMetrics): Promise<string[]> {
  const { body } = await metrics.exposition();
  return body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('the metrics table', () => {
  it('is what the registry exports besides the process metrics, row for row', () => {
    const { registry } = createMetrics();
    const defaults = defaultMetricNames();
    const own = registry.getMetricsAsArray().filter((metric) => !defaults.has(metric.name));
    expect(own.map((metric) => metric.name).sort()).toEqual(tableNames);
    for (const row of rows) {
      // prom-client keeps the configuration on the object: labelNames, and a histogram's bounds.
      const metric = registry.getSingleMetric(row.name) as unknown as {
        type: unknown;
        help: string;
        labelNames: readonly string[];
        upperBounds?: readonly number[];
      };
      expect(
        {
          type: String(metric.type),
          help: metric.help,
          labels: metric.labelNames,
          buckets: metric.upperBounds,
        },
        row.name,
      ).toEqual({
        type: row.type,
        help: row.help,
        labels: 'labels' in row ? row.labels : [],
        buckets: 'buckets' in row ? row.buckets : undefined,
      });
    }
  });

  it('keeps the series dashboards and alert rules select: names, types, labels', () => {
    // Changing one of these breaks a dashboard or an alert somewhere: change them on purpose.
    const series = rows.map(({ name, type, ...row }) => {
      const labels = 'labels' in row ? `{${row.labels.join(',')}}` : '';
      return `${name}${labels} ${type}`;
    });
    expect(series.sort().join('\n')).toMatchInlineSnapshot(`
      "graphql_envelop_error_result{phase,operationName} counter
      graphql_envelop_request_duration{operationType,operationName} histogram
      graphql_envelop_request{operationType,operationName} counter
      graphql_operation_cost_actual histogram
      graphql_operation_cost_estimated histogram
      graphql_yoga_http_duration{method,statusCode} histogram
      sms_admission_refused_total{tenant} counter
      sms_admission_seats gauge
      sms_admission_wait_seconds histogram
      sms_admission_waiting gauge
      sms_apq_requests_total{result} counter
      sms_event_loop_utilization gauge
      sms_graphql_requests_total{operationName,outcome,code,cached} counter
      sms_instance_info{version,commit,built_at} gauge
      sms_live_events_published_total counter
      sms_live_poll_failures_total counter
      sms_live_poll_locks_held gauge
      sms_live_subscribers_dropped_total{reason} counter
      sms_live_subscriptions{kind} gauge
      sms_live_takeovers_total counter
      sms_redis_up{use} gauge
      sms_response_cache_bytes gauge
      sms_response_cache_lookups_total{result} counter
      sms_response_cache_stale_total{code} counter
      sms_upstream_accounts_breaker_open gauge
      sms_upstream_accounts_rate_limited gauge
      sms_upstream_calls_joined_total{operation} counter
      sms_upstream_circuit_open gauge
      sms_upstream_concurrency{kind} gauge
      sms_upstream_refused_total{reason} counter
      sms_upstream_request_duration_seconds{operation} histogram
      sms_upstream_requests_total{operation,outcome} counter"
    `);
  });

  it('reports what a scrape reads before anything is watched', async () => {
    const series = await seriesOf(createMetrics());
    expect(series).toEqual(
      expect.arrayContaining([
        'sms_instance_info{version="unknown",commit="unknown",built_at="unknown"} 1',
        'sms_upstream_circuit_open 0',
        'sms_upstream_accounts_breaker_open 0',
        'sms_upstream_accounts_rate_limited 0',
        'sms_admission_waiting 0',
        'sms_admission_seats -1',
        'sms_event_loop_utilization 0',
        'sms_response_cache_bytes 0',
        'sms_live_poll_locks_held 0',
      ]),
    );
    // Labelled gauges with nothing watched have no series at all.
    const labelled = ['sms_upstream_concurrency', 'sms_live_subscriptions', 'sms_redis_up'];
    expect(series.filter((line) => labelled.some((name) => line.startsWith(name)))).toEqual([]);
  });

  it('is fed by the hooks: each row by at least one', async () => {
    const metrics = createMetrics({
      version: '1.2.3',
      commit: '0123456789ab',
      builtAt: '2026-12-01T10:00:00.000Z',
    });
    const trusted = () => true;
    metrics.upstream.attempt('smshistory', 0.02, 'ok');
    metrics.upstream.refused?.('rate_limited');
    metrics.upstream.joined?.('allownednumbers');
    metrics.cacheLookup('hit');
    metrics.staleServed('UPSTREAM_UNAVAILABLE');
    metrics.watch({
      breaker: () => 'half-open',
      concurrency: () => ({ limit: 7, inFlight: 3, waiting: 2 }),
      accounts: () => ({ breakerOpen: 4, rateLimited: 5 }),
      admission: () => ({ waiting: 6, seats: 12, utilization: 0.5 }),
    });
    metrics.admissionWaited(0.2);
    metrics.admissionRefused('anonymous');
    metrics.apqRequest('registered');
    // Given again: added to what it watched (each use of Redis its own).
    metrics.watch({ live: () => ({ topics: 8, subscriptions: 9, locksHeld: 1 }) });
    metrics.watch({ redis: { apq: () => false }, cacheBytes: () => 1234 });
    metrics.watch({ redis: { live: () => true } });
    metrics.live.published(3);
    metrics.live.pollFailed();
    metrics.live.takeover();
    metrics.live.dropped('slow');
    const named = { name: 'Inbox', validated: true, trusted };
    metrics.operationDone({ ...named, type: 'query', seconds: 0.01, errorPhase: 'execute' });
    metrics.costEstimated(30_000);
    metrics.costActual(3);
    metrics.requestDone({ ...named, outcome: 'ok', code: 'none', cached: true });
    metrics.httpDone('POST', 200, 0.01);

    const series = await seriesOf(metrics);
    const expected = [
      'sms_upstream_requests_total{operation="smshistory",outcome="ok"} 1',
      'sms_upstream_request_duration_seconds_count{operation="smshistory"} 1',
      'sms_upstream_refused_total{reason="rate_limited"} 1',
      'sms_upstream_calls_joined_total{operation="allownednumbers"} 1',
      'sms_response_cache_lookups_total{result="hit"} 1',
      'sms_response_cache_stale_total{code="UPSTREAM_UNAVAILABLE"} 1',
      'sms_upstream_circuit_open 1',
      'sms_upstream_concurrency{kind="limit"} 7',
      'sms_upstream_concurrency{kind="in_flight"} 3',
      'sms_upstream_concurrency{kind="waiting"} 2',
      'sms_upstream_accounts_breaker_open 4',
      'sms_upstream_accounts_rate_limited 5',
      'sms_admission_waiting 6',
      'sms_admission_seats 12',
      'sms_event_loop_utilization 0.5',
      'sms_admission_wait_seconds_bucket{le="0.5"} 1',
      'sms_admission_refused_total{tenant="anonymous"} 1',
      'sms_apq_requests_total{result="registered"} 1',
      'sms_live_subscriptions{kind="subscriptions"} 9',
      'sms_live_subscriptions{kind="topics"} 8',
      'sms_live_poll_locks_held 1',
      'sms_redis_up{use="apq"} 0',
      'sms_redis_up{use="live"} 1',
      'sms_response_cache_bytes 1234',
      'sms_live_events_published_total 3',
      'sms_live_poll_failures_total 1',
      'sms_live_takeovers_total 1',
      'sms_live_subscribers_dropped_total{reason="slow"} 1',
      'graphql_envelop_error_result{phase="execute",operationName="Inbox"} 1',
      'graphql_envelop_request{operationType="query",operationName="Inbox"} 1',
      'graphql_envelop_request_duration_count{operationType="query",operationName="Inbox"} 1',
      'graphql_operation_cost_estimated_bucket{le="50000"} 1',
      'graphql_operation_cost_actual_bucket{le="10"} 1',
      'sms_graphql_requests_total{operationName="Inbox",outcome="ok",code="none",cached="true"} 1',
      'graphql_yoga_http_duration_count{method="POST",statusCode="200"} 1',
      'sms_instance_info{version="1.2.3",commit="0123456789ab",built_at="2026-12-01T10:00:00.000Z"} 1',
    ];
    expect(series).toEqual(expect.arrayContaining(expected));
    const fed = (name: string) =>
      expected.some((line) => new RegExp(`^${name}(?:_bucket|_count)?[{ ]`).test(line));
    expect(tableNames.filter((name) => !fed(name))).toEqual([]);
  });
});

/** Metric names the pages give in backticks, against the table's. */
function listedIn(pages: readonly string[]): { missing: string[]; unknown: string[] } {
  const named = pages.flatMap((page) => [...page.matchAll(/`((?:sms|graphql)_[a-z0-9_]+)/g)]);
  const listed = new Set(named.map((m) => m[1]!));
  return {
    missing: tableNames.filter((name) => !listed.has(name)),
    unknown: [...listed].filter((name) => !tableNames.includes(name)).sort(),
  };
}

/** docs/observability.md and the pages of docs/ it links to (each subsystem's metrics may be there). */
function observabilityPages(): string[] {
  const read = (file: string) => readFileSync(join(ROOT, 'docs', file), 'utf8');
  const page = read('observability.md');
  const linked = new Set([...page.matchAll(/\]\(([a-z-]+\.md)(?:#[^)]*)?\)/g)].map((m) => m[1]!));
  return [page, ...[...linked].filter((file) => existsSync(join(ROOT, 'docs', file))).map(read)];
}

describe('docs/observability.md, with the pages it links', () => {
  const pages = observabilityPages();

  it('lists exactly the metrics of the table', () => {
    expect(listedIn(pages)).toEqual({ missing: [], unknown: [] });
  });

  it('would catch a metric left out or misspelt', () => {
    const complete = tableNames.map((name) => `\`${name}\``).join(', ');
    expect(listedIn([complete])).toEqual({ missing: [], unknown: [] });
    const misspelt = complete.replace('`sms_redis_up`', '`sms_redis_upp`');
    expect(listedIn([misspelt])).toEqual({ missing: ['sms_redis_up'], unknown: ['sms_redis_upp'] });
  });
});
