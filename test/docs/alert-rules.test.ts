/**
 * The example alert rules behave as docs/alerts/prometheus-rules.test.yml says, checked by
 * Prometheus' own promtool (Debian's `prometheus` package; .ci/run installs it): a client's
 * mistakes do not page, answers from the response cache count, a failing copy pages after
 * 5 minutes, a failing service within 2 minutes of its outage, wrong tokens never. The rules
 * found wrong before (errors over executed operations only, wrong passwords included; an
 * UpstreamFailing that waited nearly 6 minutes) must fail those tests, so they can fail. Every
 * alert says what it means (description) and links its section of docs/runbook.md (runbook_url).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { anchorsOf } from './markdown.js';

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

/**
 * The rules' own tests (prometheus-rules.test.yml) run against the rules as `change` makes them,
 * in a directory of their own: what promtool says.
 */
async function testChangedRules(change: (rules: string) => string) {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-alert-rules-'));
  try {
    const rules = await readFile(join(ALERTS, 'prometheus-rules.yml'), 'utf8');
    const changed = change(rules);
    expect(changed).not.toBe(rules);
    await writeFile(join(dir, 'prometheus-rules.yml'), changed);
    await copyFile(
      join(ALERTS, 'prometheus-rules.test.yml'),
      join(dir, 'prometheus-rules.test.yml'),
    );
    return await promtool(['test', 'rules', 'prometheus-rules.test.yml'], dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
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
    const tested = await testChangedRules((rules) => {
      const current =
        'sum by (instance_id) (rate(sms_graphql_requests_total{outcome="error"}[5m]))\n' +
        '            / sum by (instance_id) (rate(sms_graphql_requests_total[5m]))';
      expect(rules).toContain(current);
      return rules.replace(
        current,
        'sum by (instance_id) (rate(sms_graphql_requests_total{outcome!="ok",cached="false"}[5m]))\n' +
          '            / sum by (instance_id) (rate(sms_graphql_requests_total{cached="false"}[5m]))',
      );
    });
    expect(tested.ok).toBe(false);
    expect(tested.output).toMatch(/GatewayHighErrorRate/);
  });

  it('would catch the old UpstreamFailing ratio: breaker refusals unread, wrong passwords counted', async () => {
    const tested = await testChangedRules((rules) => {
      const current = /( {6}- alert: UpstreamFailing\n {8}expr: \|\n)((?: {10}.*\n)+)/;
      expect(rules).toMatch(current);
      return rules.replace(
        current,
        '$1' +
          '          sum by (instance_id) (rate(sms_upstream_requests_total{outcome!="ok"}[5m]))\n' +
          '            / sum by (instance_id) (rate(sms_upstream_requests_total[5m])) > 0.10\n',
      );
    });
    expect(tested.ok).toBe(false);
    // Both ways: the failing service does not page in time, the wrong passwords page.
    expect(tested.output).toMatch(/UpstreamFailing, time: 12m/);
    expect(tested.output).toMatch(/UpstreamFailing, time: 15m/);
  });

  it('would catch the old UpstreamFailing timing: a 5-minute window held 5 minutes', async () => {
    const tested = await testChangedRules((rules) => {
      const current = /( {6}- alert: UpstreamFailing\n {8}expr: \|\n(?: {10}.*\n)+ {8}for: )1m\n/;
      const rule = current.exec(rules)?.[0] ?? '';
      expect(rule).toContain('[2m]');
      return rules.replace(
        rule,
        rule.replaceAll('[2m]', '[5m]').replace(/for: 1m\n$/, 'for: 5m\n'),
      );
    });
    expect(tested.ok).toBe(false);
    // The outage of minute 10 has not paged at 12m, and the 2-minute outage never pages.
    expect(tested.output).toMatch(/UpstreamFailing, time: 12m/);
  });
});

/** The alerts of the rules file, each with its annotations (the file's own layout, read as text). */
function alertsOf(rules: string): { name: string; annotations: Map<string, string> }[] {
  return rules
    .split(/^ {6}- alert: /m)
    .slice(1)
    .map((block) => {
      const name = block.slice(0, block.indexOf('\n')).trim();
      const annotations = new Map<string, string>();
      const section = block.split(/^ {8}annotations:\n/m)[1] ?? '';
      for (const [, key, value] of section.matchAll(/^ {10}([a-z_]+): (.*)$/gm)) {
        annotations.set(key ?? '', (value ?? '').replace(/^'(.*)'$/, '$1'));
      }
      return { name, annotations };
    });
}

describe('every alert says what it means and where its runbook is', () => {
  const rules = readFileSync(join(ALERTS, 'prometheus-rules.yml'), 'utf8');
  const runbook = readFileSync(join(ALERTS, '..', 'runbook.md'), 'utf8');
  const alerts = alertsOf(rules);

  it('reads every alert of the file', () => {
    expect(alerts.length).toBe((rules.match(/^ +- alert: /gm) ?? []).length);
    expect(alerts.map((a) => a.name)).toContain('UpstreamFailing');
  });

  it('has a description and a runbook_url to its own section of docs/runbook.md', () => {
    const anchors = anchorsOf(runbook);
    const problems: string[] = [];
    for (const { name, annotations } of alerts) {
      const description = annotations.get('description') ?? '';
      if (description.length < 40) problems.push(`${name}: no description`);
      const url = annotations.get('runbook_url') ?? '';
      const match = /^https:\/\/[^\s#]+\/docs\/runbook\.md#([a-z0-9-]+)$/.exec(url);
      if (!match) problems.push(`${name}: runbook_url is not docs/runbook.md#<section>: ${url}`);
      else if (!anchors.has(match[1]!))
        problems.push(`${name}: docs/runbook.md has no #${match[1]}`);
      else if (match[1] !== name.toLowerCase()) problems.push(`${name}: links #${match[1]}`);
    }
    expect(problems).toEqual([]);
  });

  it('gives each section what it means, what to look at and what to do', () => {
    const sections = runbook.split(/^## /m).slice(1);
    const missing: string[] = [];
    for (const { name } of alerts) {
      const section = sections.find((s) => s.startsWith(`${name}\n`));
      if (!section) {
        missing.push(`${name}: no section`);
        continue;
      }
      for (const part of ['**What it means**', '**What to look at**', '**What to do**']) {
        if (!section.includes(part)) missing.push(`${name}: ${part}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
