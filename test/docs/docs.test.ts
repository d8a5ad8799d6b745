/**
 * The documentation holds together: every relative link in README.md and docs/*.md reaches a
 * file (and its #anchor a heading there), and every environment variable src/config/config.ts reads is
 * in README's configuration table.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/dist.js';

const pages = [
  join(ROOT, 'README.md'),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name)),
];

/** Markdown without fenced code blocks, where link-like text is code, not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} +(.+?) *$/gm)) {
    found.add(
      (heading ?? '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return found;
}

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
        if (anchor && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor))
          broken.push(`${link}: no such heading`);
      }
      expect(broken).toEqual([]);
    },
  );
});

describe('README configuration table', () => {
  it('lists every environment variable src/config/config.ts reads', () => {
    const config = readFileSync(join(ROOT, 'src', 'config', 'config.ts'), 'utf8');
    const read = new Set<string>();
    for (const pattern of [
      /env\.([A-Z][A-Z0-9_]+)/g,
      /(?:int|readSwitch|readHttpUrl)\(\s*'([A-Z][A-Z0-9_]+)'/g,
    ])
      for (const [, name] of config.matchAll(pattern)) read.add(name ?? '');
    expect(read.size).toBeGreaterThan(30);

    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'));
    const rows = new Set(
      [...table.matchAll(/^\| `([A-Z][A-Z0-9_]+)` +\|/gm)].map(([, name]) => name ?? ''),
    );
    expect([...read].filter((name) => !rows.has(name))).toEqual([]);
  });
});
