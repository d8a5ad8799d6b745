/**
 * The doctor's plain-text table (fixed columns, a count of what holds, evidence for what does
 * not) and its JSON report (redacted as a whole, readable by its owner only).
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/doctor/findings.js';
import { renderReport, wrap, writeJsonReport, type JsonReport } from '../../src/doctor/report.js';

const finding = (id: string, holds: boolean | null, set = ''): Finding => ({
  id,
  question: `Does ${id} hold for every answer the service gives to this account?`,
  answer: 'It answered three times in the same shape',
  evidence: [`evidence of ${id}`],
  gatewayAssumes: 'the documented shape',
  holds,
  set,
});

const summary = { url: 'http://127.0.0.1:9/', callsMade: 7, maxCalls: 40, ratePerSecond: 2 };

describe('renderReport', () => {
  it('counts what holds, what does not and what could not be told, and lists what to set', () => {
    const text = renderReport(
      [
        finding('a.ok', true),
        finding('b.no', false, 'UPSTREAM_HISTORY_END=inclusive'),
        finding('c.unknown', null),
      ],
      summary,
    );
    expect(text).toMatch(
      /^Doctor: http:\/\/127\.0\.0\.1:9\/, 7 of at most 40 calls, at most 2 a second\n/,
    );
    expect(text).toContain('1 hold, 1 do not, 1 could not be told.');
    expect(text).toContain('Set: UPSTREAM_HISTORY_END=inclusive');
    // Evidence only for what does not hold or could not be told.
    expect(text).toContain('b.no (NO):\n  - evidence of b.no');
    expect(text).toContain('c.unknown (?):\n  - evidence of c.unknown');
    expect(text).not.toContain('evidence of a.ok');
  });

  it('keeps every line of the table within its columns, however long the cells', () => {
    const long = finding('d.long', false);
    const text = renderReport(
      [{ ...long, answer: `${'x'.repeat(75)} and more words after it` }],
      summary,
    );
    const lines = text.split('\n');
    const table = lines.slice(2, lines.indexOf('', 2));
    const width = 30 + 30 + 26 + 5 + 30 + 4 * 3;
    for (const line of table) expect(line.length).toBeLessThanOrEqual(width);
    expect(table.length).toBeGreaterThan(3);
  });
});

describe('wrap', () => {
  it('keeps every word, in order, on lines no wider than asked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,25}$/), { maxLength: 20 }),
        fc.integer({ min: 1, max: 30 }),
        (words, width) => {
          const lines = wrap(words.join(' '), width);
          for (const line of lines) expect(line.length).toBeLessThanOrEqual(width);
          expect(lines.join('').replace(/ /g, '')).toBe(words.join(''));
        },
      ),
    );
  });
});

const SECRET = 'tok-0123-secret';

const echoed: Finding = {
  id: 'history.end',
  question: 'How does the service read history_end?',
  answer: `exclusive (the service echoed ${SECRET})`,
  evidence: [`history 0..1: 1 message for ${SECRET}`],
  gatewayAssumes: 'exclusive',
  holds: true,
  set: '',
};

const report: JsonReport = { findings: [echoed], exitCode: 0, couldNotAsk: null, calls: 7 };

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
          ...echoed,
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
