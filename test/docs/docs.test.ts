/**
 * The documentation holds together: every relative link in README.md and docs/*.md reaches a
 * file (and its #anchor a heading there); docs/configuration.md's tables are the ones rendered
 * from src/config/settings.ts and fixed.ts (`npm run docs:config`), README's short table (which
 * links it) repeats its rows unchanged, and its list of prefixes is the one unknown-variables.ts
 * refuses by.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigurationPage } from '../../scripts/config-docs.js';
import { CONFIG_VARIABLES, DOCTOR_SETTINGS } from '../../src/config/settings.js';
import { GATEWAY_PREFIXES } from '../../src/config/unknown-variables.js';
import { ROOT } from '../../support/dist.js';
import { anchorsOf, prose } from './markdown.js';

const pages = [
  join(ROOT, 'README.md'),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name)),
];

function relativeLinks(markdown: string): string[] {
  const links = [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
  return links.filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link));
}

describe('documentation links', () => {
  it.each(pages.map((page) => [relative(ROOT, page), page]))(
    '%s: every relative link and anchor resolves',
    (_name, page) => {
      const markdown = readFileSync(page, 'utf8');
      const broken: string[] = [];
      for (const link of relativeLinks(markdown)) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? page : resolve(dirname(page), path);
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (
          anchor &&
          target.endsWith('.md') &&
          !anchorsOf(readFileSync(target, 'utf8')).has(anchor)
        )
          broken.push(`${link}: no such heading`);
      }
      expect(broken).toEqual([]);
    },
  );
});

/** The rows of every table in `markdown` whose first cell is a variable: name -> its cells. */
function variableRows(markdown: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of markdown.split('\n')) {
    const name = /^\| `([A-Z][A-Z0-9_]+)` +\|/.exec(line)?.[1];
    if (!name) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    // Links are written from README.md or from docs/: compared as from docs/.
    rows.set(
      name,
      cells.map((cell) => cell.replaceAll('](docs/', '](')),
    );
  }
  return rows;
}

/** The section of `markdown` under the heading `heading` (up to the next `## `). */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) return '';
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

describe('configuration tables', () => {
  const page = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const fixedValues = section(page, '## Fixed values');
  const full = variableRows(page.replace(fixedValues, ''));

  it('has the tables src/config/settings.ts and fixed.ts render: run `npm run docs:config`', () => {
    expect(page).toBe(renderConfigurationPage(page));
  });

  it("so lists every variable read, the gateway's and the doctor's, and no other", () => {
    const read = [...CONFIG_VARIABLES, ...Object.keys(DOCTOR_SETTINGS)];
    expect(read.length).toBeGreaterThan(30);
    expect([...full.keys()].sort()).toEqual(read.sort());
    expect(variableRows(fixedValues).size).toBeGreaterThan(10);
  });

  it('fails when a table differs from the code, or is not rendered from it', () => {
    const stale = page.replace(/(\| `PORT` +\| )`4000`/, '$1`4001`');
    expect(stale).not.toBe(page);
    expect(renderConfigurationPage(stale)).not.toBe(stale);
    expect(() => renderConfigurationPage(`${page}\n## Elsewhere\n\n| a |\n| - |\n`)).toThrow(
      /a table under "Elsewhere" not rendered from the code/,
    );
    const doctor = section(page, '## The doctor');
    const untabled = page.replace(doctor, doctor.replace(/^\|.*\n/gm, ''));
    expect(() => renderConfigurationPage(untabled)).toThrow(/no table under: The doctor/);
  });

  it('lists the prefixes that mark a variable as meant for the gateway', () => {
    const sentence = /starts with one of the gateway's prefixes: ([^;]+);/.exec(page)?.[1] ?? '';
    const listed = [...sentence.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]);
    expect(listed).toEqual([...GATEWAY_PREFIXES]);
  });

  it("README's short table links the full one and repeats its rows unchanged", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Configuration'),
      readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1),
    );
    expect(section).toContain('](docs/configuration.md)');
    const short = variableRows(section);
    expect(short.size).toBeGreaterThan(5);
    for (const [name, cells] of short) expect(cells, name).toEqual(full.get(name));
  });
});

describe('README: first steps', () => {
  it('tells how to see live updates in demo mode, where no message arrives by default', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('## A first query');
    const firstSteps = readme.slice(start, readme.indexOf('\n## ', start + 1));
    // GraphiQL's subscription otherwise waits forever on a plain `npm start`.
    expect(firstSteps).toMatch(/subscription \{ messageAdded/);
    expect(firstSteps).toMatch(/SIMULATOR_ARRIVALS_MS=\d+ npm start/);
  });
});
