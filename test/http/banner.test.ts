/**
 * The start-up lines say what is on: GraphiQL as GRAPHIQL and NODE_ENV leave it (production: off,
 * unless GRAPHIQL=on), what this copy runs (version, commit, build time), and where the response
 * cache keeps answers: in Sentinel mode the sentinels and the primary's name, never REDIS_URL's host.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { banner, metricsLine, responseCacheLine, versionLine } from '../../src/http/banner.js';
import { gatewayBuild } from '../../src/observability/version.js';

const SECRET = 'banner-test-secret-0123456789abcdef';

function lineFor(env: Record<string, string>): string {
  const config = loadConfig({ CACHE_TTL_MS: '60000', GATEWAY_SECRET: SECRET, ...env });
  return responseCacheLine(config.responseCache, config.redis);
}

describe('the response cache line', () => {
  it('Sentinel: names the sentinels and the primary, not REDIS_URL host, nor its password', () => {
    const line = lineFor({
      REDIS_URL: 'redis://:pw-not-shown@ignored-host:6379/2',
      REDIS_SENTINELS: 'sentinel-1:26379,sentinel-2:26379',
      REDIS_SENTINEL_NAME: 'gateway-primary',
    });
    expect(line).toBe(
      'Response cache: on, in Redis at the primary "gateway-primary" of sentinels sentinel-1:26379,sentinel-2:26379, answers kept 60000 ms',
    );
    expect(line).not.toContain('ignored-host');
    expect(line).not.toContain('pw-not-shown');
  });

  it('a single server: REDIS_URL host; a cluster: every seed node', () => {
    expect(lineFor({ REDIS_URL: 'redis://:pw@redis.internal:6380/0' })).toBe(
      'Response cache: on, in Redis at redis.internal:6380, answers kept 60000 ms',
    );
    expect(
      lineFor({ REDIS_URL: 'redis://node-1:7000', REDIS_CLUSTER_NODES: 'node-2:7001' }),
    ).toContain('in Redis at cluster node-1:7000,node-2:7001,');
  });

  it('in memory, with stale-if-error', () => {
    expect(lineFor({ CACHE_STALE_IF_ERROR_MS: '5000' })).toBe(
      'Response cache: on, in memory, answers kept 60000 ms, served stale up to 5000 ms more',
    );
  });
});

describe('the metrics line', () => {
  it('gives the address METRICS_HOST binds, and says so when that is every interface', () => {
    expect(metricsLine('127.0.0.1', 9464)).toBe('Metrics: http://127.0.0.1:9464/metrics');
    expect(metricsLine('fd00::5', 9464)).toBe('Metrics: http://[fd00::5]:9464/metrics');
    expect(metricsLine('0.0.0.0', 9464)).toBe(
      'Metrics: http://localhost:9464/metrics (listening on 0.0.0.0: every interface)',
    );
  });
});

describe('the first lines', () => {
  const build = { version: '2.0.0', commit: '0123456789ab', builtAt: '2026-12-01T10:00:00.000Z' };
  const firstLine = (env: Record<string, string>): string => {
    const config = loadConfig({
      GATEWAY_SECRET: SECRET,
      UPSTREAM_URL: 'https://sms.example',
      ...env,
    });
    const cors = { origins: config.corsOrigins, allowLoopback: false };
    const text = banner('http://localhost:4000/graphql', { origin: 'https://sms.example' }, cors, {
      graphiql: config.graphiql,
      build,
    });
    return text.split('\n')[0]!;
  };

  it('say GraphiQL is off in production, and how to turn it on; on where it is', () => {
    const off = firstLine({ NODE_ENV: 'production' });
    expect(off).toBe(
      'SMS GraphQL gateway on http://localhost:4000/graphql (GraphiQL and introspection off; GRAPHIQL=on turns them on)',
    );
    expect(off).not.toContain('open it in a browser');
    expect(firstLine({ NODE_ENV: 'production', GRAPHIQL: 'on' })).toContain(
      '(GraphiQL: open it in a browser)',
    );
    expect(firstLine({})).toContain('(GraphiQL: open it in a browser)');
    expect(firstLine({ GRAPHIQL: 'off' })).toContain('GraphiQL and introspection off');
  });

  it('name the version, the commit and the build time, as sms_instance_info does', () => {
    const text = banner(
      'http://localhost:4000/graphql',
      { origin: 'https://sms.example' },
      {
        origins: [],
        allowLoopback: false,
      },
      { graphiql: false, build },
    );
    expect(text.split('\n')[1]).toBe(
      'Version 2.0.0, commit 0123456789ab, built 2026-12-01T10:00:00.000Z',
    );
    // From the sources nothing was built: said so, not 'built unknown'.
    expect(versionLine(gatewayBuild())).toMatch(
      /^Version \d+\.\d+\.\d+, commit [0-9a-f]{12}(-dirty)?, run from the sources$/,
    );
  });
});
