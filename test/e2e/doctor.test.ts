/**
 * `npm run doctor` as shipped: the built dist/doctor.js in a process of its own, against the
 * built-in simulator in each reading of history_end. The exit status, the table on stdout and
 * the JSON file are what a person or a script gets; no credential appears in any of them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS, startSimulator } from '../../src/simulator/index.js';
import { ROOT } from '../../support/dist.js';

const dir = mkdtempSync(join(tmpdir(), 'doctor-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runBuilt(env: Record<string, string>, args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'dist', 'doctor.js'), ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? Number((error as { code?: number }).code ?? 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe.each(['exclusive', 'inclusive'] as const)('dist/doctor.js, simulator %s', (historyEnd) => {
  it('exits 0 or 1 as history.end holds, and writes no credential', async () => {
    const simulator = await startSimulator({ historyEnd });
    const jsonPath = join(dir, `${historyEnd}.json`);
    try {
      const run = await runBuilt(
        {
          UPSTREAM_URL: simulator.url,
          SMS_SYS_ID: DEMO_CREDENTIALS.sysId,
          SMS_AUTH_TOKEN: DEMO_CREDENTIALS.authToken,
        },
        ['--rate', '100', '--json', jsonPath],
      );
      expect(run.code).toBe(historyEnd === 'exclusive' ? 0 : 1);
      expect(run.stdout).toMatch(/history\.end: Is history_end/);
      const json = readFileSync(jsonPath, 'utf8');
      const report = JSON.parse(json) as { findings: { id: string; answer: string }[] };
      expect(report.findings.find((f) => f.id === 'history.end')?.answer).toBe(historyEnd);
      const { sysId, authToken } = DEMO_CREDENTIALS;
      for (const secret of [
        sysId,
        authToken,
        Buffer.from(`${sysId}:${authToken}`).toString('base64'),
        Buffer.from(authToken).toString('base64'),
        encodeURIComponent(authToken),
      ]) {
        expect(run.stdout).not.toContain(secret);
        expect(run.stderr).not.toContain(secret);
        expect(json).not.toContain(secret);
      }
    } finally {
      await simulator.close();
    }
  });
});

it('exits 2 with the reason when the environment lacks the credentials', async () => {
  const run = await runBuilt({ UPSTREAM_URL: 'http://127.0.0.1:9' }, []);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/SMS_SYS_ID is not set/);
  expect(run.stdout).toBe('');
});
