/**
 * docs/configuration.md's tables, rendered from the code: under each heading of SECTIONS
 * (src/config/settings.ts) a row per setting, its Default and Meaning as declared there; under
 * "Fixed values" a row per constant of src/config/fixed.ts, at its value, with the reason its doc
 * comment gives. The prose around them is the page's own. Writes the page; with --check, fails
 * when it is stale (test/docs/docs.test.ts makes the same comparison).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as fixed from '../src/config/fixed.js';
import { SECTIONS } from '../src/config/settings.js';

export const PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const FIXED_SOURCE = fileURLToPath(new URL('../src/config/fixed.ts', import.meta.url));
const FIXED_HEADING = 'Fixed values';

const code = (text: unknown): string => `\`${String(text)}\``;

/** A Markdown table as prettier lays it out: each column padded to its widest cell. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, i) =>
    Math.max(3, title.length, ...rows.map((row) => row[i]?.length ?? 0)),
  );
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join(
    '\n',
  );
}

/** Each FIXED_ constant of fixed.ts, in its order there, with its doc comment as the reason. */
function fixedRows(source: string): string[][] {
  const values: Record<string, unknown> = fixed;
  const rows: string[][] = [];
  for (const [, comment = '', name = ''] of source.matchAll(
    /\/\*\*((?:[^*]|\*(?!\/))*)\*\/\s*export const (FIXED_\w+)/g,
  )) {
    const why = comment.replace(/\s*\n\s*\*\s*/g, ' ').trim();
    rows.push([code(name), code(values[name]), why]);
  }
  return rows;
}

/** Every table the page should have: its heading -> the table. */
function tables(fixedSource: string): Map<string, string> {
  const rendered = new Map<string, string>();
  for (const [heading, settings] of Object.entries(SECTIONS)) {
    const rows = Object.entries(settings).map(([name, s]) => [code(name), s.shown, s.doc]);
    rendered.set(heading, table(['Variable', 'Default', 'Meaning'], rows));
  }
  rendered.set(FIXED_HEADING, table(['Constant', 'Value', 'Why fixed'], fixedRows(fixedSource)));
  return rendered;
}

/**
 * `page` with the table of each `## ` section replaced by the one rendered from the code. A
 * section the code has no table for, or a table missing from the page, is an error: every
 * table of the page is rendered.
 */
export function renderConfigurationPage(
  page: string,
  fixedSource = readFileSync(FIXED_SOURCE, 'utf8'),
): string {
  const rendered = tables(fixedSource);
  const placed = new Set<string>();
  const sections = page.split(/^(?=## )/m).map((section) => {
    const heading = /^## (.+)\n/.exec(section)?.[1] ?? '';
    return section.replace(/^\|.*\|\n(?:\|.*\|\n)*/gm, () => {
      const table = rendered.get(heading);
      if (table === undefined || placed.has(heading))
        throw new Error(
          `docs/configuration.md: a table under "${heading}" not rendered from the code`,
        );
      placed.add(heading);
      return `${table}\n`;
    });
  });
  const missing = [...rendered.keys()].filter((heading) => !placed.has(heading));
  if (missing.length > 0)
    throw new Error(`docs/configuration.md has no table under: ${missing.join(', ')}`);
  return sections.join('');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const page = readFileSync(PAGE, 'utf8');
  const rendered = renderConfigurationPage(page);
  if (process.argv.includes('--check')) {
    if (rendered !== page) {
      console.error(
        'docs/configuration.md is out of date: run `npm run docs:config` and commit it.',
      );
      process.exit(1);
    }
    console.log('docs/configuration.md is up to date.');
  } else {
    writeFileSync(PAGE, rendered);
    console.log(`Wrote ${PAGE}`);
  }
}
