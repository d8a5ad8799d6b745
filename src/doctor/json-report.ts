/** The findings as JSON, for scripts: `{ "findings": [...] }` plus how the run went. */
import { writeFile } from 'node:fs/promises';
import type { Finding } from './findings.js';

export interface JsonReport {
  readonly findings: readonly Finding[];
  /** 0: every assumption holds; 1: one does not; 2: the service could not be asked. */
  readonly exitCode: 0 | 1 | 2;
  /** Why the service could not be asked (exit 2); null otherwise. */
  readonly couldNotAsk: string | null;
  readonly calls: number;
}

/** Writes `report` to `path`, every string passed through `redact` first. */
export async function writeJsonReport(
  path: string,
  report: JsonReport,
  redact: (text: string) => string,
): Promise<void> {
  await writeFile(path, `${redact(JSON.stringify(report, null, 2))}\n`, { mode: 0o600 });
}
