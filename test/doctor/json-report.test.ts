/** The doctor's JSON report: the report as JSON, redacted as a whole, readable by its owner only. */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/doctor/findings.js';
import { writeJsonReport, type JsonReport } from '../../src/doctor/json-report.js';

const SECRET = 'tok-0123-secret';

const finding: Finding = {
  id: 'history.end',
  question: 'How does the service read history_end?',
  answer: `exclusive (the service echoed ${SECRET})`,
  evidence: [`history 0..1: 1 message for ${SECRET}`],
  gatewayAssumes: 'exclusive',
  holds: true,
  set: '',
};

const report: JsonReport = { findings: [finding], exitCode: 0, couldNotAsk: null, calls: 7 };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'doctor-json-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('writeJsonReport', () => {
  it('writes the report as indented JSON and a newline, every string redacted', async () => {
    const path = join(dir, 'report.json');
    await writeJsonReport(path, report, (text) => text.replaceAll(SECRET, '[redacted]'));
    const text = await readFile(path, 'utf8');
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text)).toEqual({
      ...report,
      findings: [
        {
          ...finding,
          answer: 'exclusive (the service echoed [redacted])',
          evidence: ['history 0..1: 1 message for [redacted]'],
        },
      ],
    });
  });

  it('is readable and writable by its owner only', async () => {
    const path = join(dir, 'private.json');
    await writeJsonReport(path, { ...report, exitCode: 2, couldNotAsk: 'no answer' }, (t) => t);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      exitCode: 2,
      couldNotAsk: 'no answer',
    });
  });
});
