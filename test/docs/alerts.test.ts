/**
 * The example alert rules and Grafana dashboard in docs/alerts/ name only metrics the gateway
 * exports: each name is looked up in the registry of a gateway assembled with every subsystem
 * on (response cache, APQ, live updates, Redis for each use).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResponseCache } from '../../src/cache/response-cache.js';
import { createMetrics, type GatewayMetrics } from '../../src/observability/metrics.js';
import { connectRedis, type RedisConnection } from '../../src/redis/connection.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';
import { freePort } from '../fixtures/redis.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const rules = readFileSync(join(ROOT, 'docs', 'alerts', 'prometheus-rules.yml'), 'utf8');
const dashboard = readFileSync(join(ROOT, 'docs', 'alerts', 'grafana-dashboard.json'), 'utf8');

/** Series Prometheus makes itself, not the gateway. */
const FROM_PROMETHEUS = new Set(['up']);
/**
 * Metrics the fixed list (docs/observability.md) gives to work merged separately: exempt only
 * while absent. Once one exists, the second test asks for it to leave this list.
 */
const FROM_PARALLEL_WORK: string[] = [];

/** Metric names in PromQL: identifiers followed by a selector, a range or the end of a term. */
function metricNames(text: string): string[] {
  const exprs = [
    ...[...text.matchAll(/expr: \|\n((?: {10}.*\n)+)/g)].map((m) => m[1] ?? ''),
    ...[...text.matchAll(/expr: ([^|\n].*)/g)].map((m) => m[1] ?? ''),
    ...[...text.matchAll(/"expr": "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] ?? ''),
  ];
  const names = new Set<string>();
  for (const expr of exprs) {
    // Label names and values, and PromQL's own words, are not metrics.
    const withoutLabels = expr
      .replace(/\{[^}]*\}/g, '{}')
      .replace(/\b(?:by|without)\s*\([^)]*\)/g, '');
    for (const match of withoutLabels.matchAll(/\b([a-z_][a-z0-9_]*)\b(?!\s*\()/g)) {
      const name = match[1] ?? '';
      if (
        /^(by|without|le|on|ignoring|group_left|group_right|and|or|unless|bool|offset)$/.test(name)
      )
        continue;
      if (/^[a-z]+_[a-z0-9_]+$/.test(name) || FROM_PROMETHEUS.has(name)) names.add(name);
    }
  }
  return [...names].sort();
}

let simulator: RunningSimulator;
let test: TestGateway;
let metrics: GatewayMetrics;
let redis: RedisConnection[];

beforeAll(async () => {
  simulator = await startSimulator();
  metrics = createMetrics({ instanceId: 'alerts-test', version: '0.0.0' });
  // Nothing listens there: the connections exist (and report 0), which is all metrics need.
  const nowhere = new URL(`redis://127.0.0.1:${await freePort()}`);
  redis = (['cache', 'apq', 'live'] as const).map((use) =>
    connectRedis(nowhere, use, { logger: false }),
  );
  const [cache, apq, live] = redis;
  test = createTestGateway(simulator.url, {
    metrics,
    responseCache: createResponseCache(
      { ttlMs: 1_000, redisUrl: null, hmacKey: null },
      { logger: false },
    ),
    live: { pollMs: 1_000 },
    redis: { cache: cache!, apq: apq!, live: live! },
  });
});
afterAll(async () => {
  await test.close();
  await Promise.all(redis.map((connection) => connection.close()));
  await simulator.close();
});

function exported(): Set<string> {
  const names = new Set<string>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    if (String(metric.type) === 'summary')
      for (const suffix of ['_sum', '_count']) names.add(metric.name + suffix);
  }
  return names;
}

describe('docs/alerts', () => {
  it('names only metrics the gateway exports', () => {
    const have = exported();
    const named = [...new Set([...metricNames(rules), ...metricNames(dashboard)])];
    expect(named.length).toBeGreaterThan(15);
    const missing = named.filter(
      (name) => !have.has(name) && !FROM_PROMETHEUS.has(name) && !FROM_PARALLEL_WORK.includes(name),
    );
    expect(missing).toEqual([]);
  });

  it('exempts no metric that exists: FROM_PARALLEL_WORK lists only the absent', () => {
    const have = exported();
    expect(FROM_PARALLEL_WORK.filter((name) => have.has(name))).toEqual([]);
  });

  it('would catch a misspelt metric', () => {
    expect(metricNames('      - expr: rate(sms_upstream_request_total[5m]) > 1\n')).toEqual([
      'sms_upstream_request_total',
    ]);
    expect(exported().has('sms_upstream_request_total')).toBe(false);
  });
});
