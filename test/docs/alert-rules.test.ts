/**
 * The example alert rules behave as docs/alerts/prometheus-rules.test.yml says, checked by
 * Prometheus' own promtool (Debian's `prometheus` package; .ci/run installs it): a client's
 * mistakes do not page, answers from the response cache count, a failing copy pages after
 * 5 minutes. The rule the issue found wrong (errors over executed operations only, wrong
 * passwords included) must fail those tests, so they can fail.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ALERTS = fileURLToPath(new URL('../../docs/alerts/', import.meta.url));
const PROMTOOL = 'promtool';
const MISSING =
  'promtool was not found on PATH. The alert-rule tests need it: install Debian\'s package with "apt-get install -y prometheus" (.ci/run does this).';

async function promtool(args: string[], cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { cwd });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (failure.code === 'ENOENT') throw new Error(MISSING);
    return { ok: false, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

describe('docs/alerts/prometheus-rules.yml under promtool', () => {
  it('is valid and passes its rule tests', async () => {
    const check = await promtool(['check', 'rules', 'prometheus-rules.yml'], ALERTS);
    expect(check.output).toContain('SUCCESS');
    expect(check.ok).toBe(true);
    const tested = await promtool(['test', 'rules', 'prometheus-rules.test.yml'], ALERTS);
    expect(tested.output).toContain('SUCCESS');
    expect(tested.ok).toBe(true);
  });

  it('would catch the old error ratio: executed operations only, client mistakes included', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-alert-rules-'));
    try {
      const rules = await readFile(join(ALERTS, 'prometheus-rules.yml'), 'utf8');
      const current =
        'sum by (instance_id) (rate(sms_graphql_requests_total{outcome="error"}[5m]))\n' +
        '            / sum by (instance_id) (rate(sms_graphql_requests_total[5m]))';
      expect(rules).toContain(current);
      const old = rules.replace(
        current,
        'sum by (instance_id) (rate(sms_graphql_requests_total{outcome!="ok",cached="false"}[5m]))\n' +
          '            / sum by (instance_id) (rate(sms_graphql_requests_total{cached="false"}[5m]))',
      );
      await writeFile(join(dir, 'prometheus-rules.yml'), old);
      await copyFile(
        join(ALERTS, 'prometheus-rules.test.yml'),
        join(dir, 'prometheus-rules.test.yml'),
      );
      const tested = await promtool(['test', 'rules', 'prometheus-rules.test.yml'], dir);
      expect(tested.ok).toBe(false);
      expect(tested.output).toMatch(/GatewayHighErrorRate/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('would catch the old UpstreamFailing ratio: breaker refusals unread, wrong passwords counted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-alert-rules-'));
    try {
      const rules = await readFile(join(ALERTS, 'prometheus-rules.yml'), 'utf8');
      const current = /( {6}- alert: UpstreamFailing\n {8}expr: \|\n)((?: {10}.*\n)+)/;
      expect(rules).toMatch(current);
      const old = rules.replace(
        current,
        '$1' +
          '          sum by (instance_id) (rate(sms_upstream_requests_total{outcome!="ok"}[5m]))\n' +
          '            / sum by (instance_id) (rate(sms_upstream_requests_total[5m])) > 0.10\n',
      );
      expect(old).not.toBe(rules);
      await writeFile(join(dir, 'prometheus-rules.yml'), old);
      await copyFile(
        join(ALERTS, 'prometheus-rules.test.yml'),
        join(dir, 'prometheus-rules.test.yml'),
      );
      const tested = await promtool(['test', 'rules', 'prometheus-rules.test.yml'], dir);
      expect(tested.ok).toBe(false);
      // Both ways: the failing service does not page in time, the wrong passwords page.
      expect(tested.output).toMatch(/UpstreamFailing, time: 18m/);
      expect(tested.output).toMatch(/UpstreamFailing, time: 15m/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
