/**
 * `npx tsx bench/startup-cost.ts [--runs=5]`: what each optional feature costs at start, as
 * `node dist/main.js` pays it. For every configuration the gateway is started `runs` times;
 * the medians of spawn-to-healthy time and of RSS right after are printed beside the baseline
 * (a real upstream URL: no simulator, nothing optional on). docs/performance.md keeps the
 * figures. Needs redis-server on PATH for the Redis rows.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis } from '../support/redis.js';
import { rssBytes, startGateway } from './children.js';
import { numberSetting } from './options.js';

const runs = numberSetting('runs', 5, 1);

async function measure(env: Record<string, string>): Promise<{ ms: number; rssMb: number }> {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const gateway = await startGateway({ LOG_LEVEL: 'warn', ...env });
    times.push(gateway.startToHealthyMs);
    rss.push(rssBytes(gateway.pid) / 1e6);
    await gateway.stop();
  }
  return { ms: median(times), rssMb: median(rss) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const dir = mkdtempSync(join(tmpdir(), 'startup-cost-'));
  const allowList = join(dir, 'operations.json');
  writeFileSync(allowList, JSON.stringify({ abc: '{ __typename }' }));
  // Nothing listens there: start-up never calls the upstream.
  const upstream = `http://127.0.0.1:${await freePort()}`;
  const hmac = 'k'.repeat(32);
  const rows: [string, Record<string, string>][] = [
    ['baseline (UPSTREAM_URL set, defaults)', { UPSTREAM_URL: upstream }],
    ['+ built-in simulator (no UPSTREAM_URL)', { UPSTREAM_URL: '' }],
    [
      '+ tracing (OTEL_EXPORTER_OTLP_ENDPOINT)',
      { UPSTREAM_URL: upstream, OTEL_EXPORTER_OTLP_ENDPOINT: upstream },
    ],
    ['+ response cache in memory (CACHE_TTL_MS)', { UPSTREAM_URL: upstream, CACHE_TTL_MS: '5000' }],
    ['+ Redis for APQ (REDIS_URL)', { UPSTREAM_URL: upstream, REDIS_URL: redis.url }],
    [
      '+ response cache in Redis (CACHE_TTL_MS, REDIS_URL)',
      { UPSTREAM_URL: upstream, CACHE_TTL_MS: '5000', REDIS_URL: redis.url, CACHE_HMAC_KEY: hmac },
    ],
    [
      '+ allow-list (PERSISTED_OPERATIONS)',
      { UPSTREAM_URL: upstream, PERSISTED_OPERATIONS: allowList },
    ],
    ['- metrics (METRICS=off)', { UPSTREAM_URL: upstream, METRICS: 'off' }],
    ['- live updates (LIVE_POLL_MS=0)', { UPSTREAM_URL: upstream, LIVE_POLL_MS: '0' }],
  ];
  try {
    const results: [string, { ms: number; rssMb: number }][] = [];
    for (const [name, env] of rows) {
      process.stderr.write(`${name}\n`);
      results.push([name, await measure(env)]);
    }
    const base = results[0]?.[1] ?? { ms: 0, rssMb: 0 };
    console.log(`| configuration | start to healthy (ms) | RSS at start (MB) | vs baseline |`);
    console.log(`| --- | ---: | ---: | --- |`);
    for (const [name, { ms, rssMb }] of results) {
      const delta =
        name === results[0]?.[0]
          ? ''
          : `${signed(ms - base.ms)} ms, ${signed(rssMb - base.rssMb, 1)} MB`;
      console.log(`| ${name} | ${ms.toFixed(0)} | ${rssMb.toFixed(1)} | ${delta} |`);
    }
    console.log(`\nmedians of ${runs} starts each`);
  } finally {
    await redis.close();
  }
}

function signed(value: number, digits = 0): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}

main().catch((error: unknown) => {
  console.error('startup-cost failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
