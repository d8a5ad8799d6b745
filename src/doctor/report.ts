/**
 * The findings as a table a person reads in a minute, then the evidence of each that does not
 * hold: plain text in fixed columns, the same in a terminal and a CI log. And as JSON for scripts.
 */
import { writeFile } from 'node:fs/promises';
import type { Finding } from './findings.js';

const COLUMNS = [
  { title: 'Question', width: 30 },
  { title: 'Answer', width: 30 },
  { title: 'Gateway assumes', width: 26 },
  { title: 'Holds', width: 5 },
  { title: 'Set', width: 30 },
] as const;

function holdsWord(holds: boolean | null): string {
  return holds === null ? '?' : holds ? 'yes' : 'NO';
}

export function renderReport(
  findings: readonly Finding[],
  summary: { url: string; callsMade: number; maxCalls: number; ratePerSecond: number },
): string {
  const failing = findings.filter((f) => f.holds === false);
  const unknown = findings.filter((f) => f.holds === null);
  const toSet = findings.map((f) => f.set).filter((s) => s !== '');
  const lines = [
    `Doctor: ${summary.url}, ${summary.callsMade} of at most ${summary.maxCalls} calls, at most ${summary.ratePerSecond} a second`,
    '',
    row(COLUMNS.map((c) => c.title)),
    COLUMNS.map((c) => '-'.repeat(c.width)).join('-+-'),
    ...findings.map((f) =>
      row([`${f.id}: ${f.question}`, f.answer, f.gatewayAssumes, holdsWord(f.holds), f.set]),
    ),
    '',
    `${findings.length - failing.length - unknown.length} hold, ${failing.length} do not, ${unknown.length} could not be told.`,
    ...(toSet.length > 0 ? [`Set: ${toSet.join('  ')}`] : []),
    ...[...failing, ...unknown].flatMap((f) => [
      '',
      `${f.id} (${holdsWord(f.holds)}):`,
      ...f.evidence.map((e) => `  - ${e}`),
    ]),
  ];
  return `${lines.join('\n')}\n`;
}

/** One table row: each cell wrapped to its column, the row as tall as its tallest cell. */
function row(cells: readonly string[]): string {
  const wrapped = cells.map((cell, i) => wrap(cell, COLUMNS[i]?.width ?? 20));
  const height = Math.max(...wrapped.map((w) => w.length));
  return Array.from({ length: height }, (_, line) =>
    wrapped
      .map((w, i) => (w[line] ?? '').padEnd(COLUMNS[i]?.width ?? 20))
      .join(' | ')
      .trimEnd(),
  ).join('\n');
}

/** Words to lines of at most `width`; a longer word is cut. */
export function wrap(text: string, width: number): string[] {
  const pieces = text
    .split(/\s+/)
    .flatMap((word) => word.match(new RegExp(`.{1,${width}}`, 'g')) ?? []);
  const lines: string[] = [];
  for (const piece of pieces) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + piece.length <= width)
      lines[lines.length - 1] = `${last} ${piece}`;
    else lines.push(piece);
  }
  return lines.length > 0 ? lines : [''];
}

export interface JsonReport {
  readonly findings: readonly Finding[];
  /** 0: every assumption holds; 1: one does not; 2: the service could not be asked. */
  readonly exitCode: 0 | 1 | 2;
  /** Why the service could not be asked (exit 2); null otherwise. */
  readonly couldNotAsk: string | null;
  readonly calls: number;
}

/** Writes `report` to `path`, readable by its owner only, every string passed through `redact`. */
export async function writeJsonReport(
  path: string,
  report: JsonReport,
  redact: (text: string) => string,
): Promise<void> {
  await writeFile(path, `${redact(JSON.stringify(report, null, 2))}\n`, { mode: 0o600 });
}
