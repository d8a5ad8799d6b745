/**
 * The UpstreamFailing rule tests (docs/alerts/prometheus-rules.test.yml) feed promtool series
 * shaped as the gateway exports them: each group marked `gateway scrape: <scenario>` names only
 * series (metric and labels, instance_id aside) that a gateway's /metrics shows after that
 * scenario, run here in-process with the production retries and breakers: the service failing
 * every call with HTTP 500, and wrong tokens (a new one on each request, and one repeated).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { accountScript } from '../../support/scripted-upstream.js';
import { executeText } from '../fixtures/harness.js';
import { scriptedStacks, type ScriptedStack } from '../fixtures/scripted-stack.js';

const RULE_TESTS = fileURLToPath(
  new URL('../../docs/alerts/prometheus-rules.test.yml', import.meta.url),
);
const QUERY = '{ ownedNumbers { tid history(start: 0, end: 2) { totalCount } } }';
const production = loadConfig({ UPSTREAM_URL: 'http://127.0.0.1:1' }).upstream;
const stacks = scriptedStacks({
  resilience: {
    retries: production.retries,
    retryBaseDelayMs: 5,
    breakerThreshold: production.breakerThreshold,
    breakerCooldownMs: production.breakerCooldownMs,
  },
});
const pair = (sysId: string, authToken: string) => ({
  'x-sys-id': sysId,
  'x-auth-token': authToken,
});

/** `name{a="1",b="2"}` without instance_id, labels sorted: one series' identity. */
function identity(series: string): string {
  const match = /^([a-z_:][a-z0-9_:]*)\{(.*)\}$/i.exec(series.trim());
  if (!match) throw new Error(`not a series: ${series}`);
  const labels = [...(match[2] ?? '').matchAll(/([a-z_][a-z0-9_]*)="((?:[^"\\]|\\.)*)"/gi)]
    .map(([, name, value]) => `${name}="${value}"`)
    .filter((label) => !label.startsWith('instance_id='))
    .sort();
  return `${match[1]}{${labels.join(',')}}`;
}

/** The upstream call series a gateway exports now, by identity. */
async function exported(s: ScriptedStack): Promise<Set<string>> {
  const text = await (await s.gateway.fetch('http://gateway.test/metrics')).text();
  return new Set(
    text
      .split('\n')
      .filter((line) => line.startsWith('sms_upstream_re'))
      .map((line) => identity(line.slice(0, line.lastIndexOf(' ')))),
  );
}

/** The input series of the rule-test groups marked with `scenario`. */
function ruleTestSeries(scenario: string): string[] {
  const groups = readFileSync(RULE_TESTS, 'utf8').split(/^ {2}- interval:/m);
  const marked = groups.filter((group) => group.includes(`# gateway scrape: ${scenario} `));
  expect(marked.length).toBeGreaterThan(0);
  return marked.flatMap((group) =>
    [...group.matchAll(/- series: '([^']+)'/g)].map((m) => identity(m[1] ?? '')),
  );
}

describe('UpstreamFailing rule tests use series as the gateway exports them', () => {
  it('service-failing: every call answered HTTP 500, breakers open', async () => {
    const healthy = accountScript(['T-A', 'T-B']);
    const s = await stacks.start(healthy, { metrics: createMetrics({ instanceId: 'copy-a' }) });
    for (let i = 0; i < 3; i += 1)
      await executeText(s.gateway, QUERY, undefined, pair('AC-1', 't'));
    s.setReply(() => ({ status: 500, text: 'Internal Server Error' }));
    for (let i = 0; i < 20; i += 1) {
      await executeText(s.gateway, QUERY, undefined, pair(`AC-${i % 3}`, 't'));
    }
    const have = await exported(s);
    expect(have).toContain('sms_upstream_refused_total{reason="service_breaker"}');
    expect(have).toContain(
      'sms_upstream_requests_total{operation="allownednumbers",outcome="UPSTREAM_ERROR"}',
    );
    for (const series of ruleTestSeries('service-failing')) expect(have).toContain(series);
  });

  it('wrong-tokens: a new wrong token on each request, and one repeated, beside good ones', async () => {
    const good = accountScript(['T-A']);
    const s = await stacks.start(
      (call) => (call.params.get('auth_token') === 'good' ? good(call) : { status: 401, text: '' }),
      { metrics: createMetrics({ instanceId: 'copy-a' }) },
    );
    for (let i = 0; i < 12; i += 1) {
      const token = i % 4 === 0 ? `wrong-${i}` : i % 4 === 1 ? 'wrong-again' : 'good';
      await executeText(s.gateway, QUERY, undefined, pair('AC-1', token));
    }
    const have = await exported(s);
    expect(have).toContain(
      'sms_upstream_requests_total{operation="allownednumbers",outcome="UNAUTHENTICATED"}',
    );
    expect(have).toContain('sms_upstream_refused_total{reason="refused_credentials"}');
    for (const series of ruleTestSeries('wrong-tokens')) expect(have).toContain(series);
  });
});
