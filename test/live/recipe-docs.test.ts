/**
 * The reconnect recipes on the docs pages are the files the e2e tests run: each fenced block
 * marked ```` ```ts recipe=name ```` equals support/recipes/<name>.ts, and every recipe file
 * is on a page.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const RECIPES = join(ROOT, 'support', 'recipes');
const PAGES = ['docs/live-updates.md', 'docs/paging.md'];

function snippets(): Map<string, string> {
  const found = new Map<string, string>();
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const match of text.matchAll(/^```ts recipe=([\w-]+)\n([\s\S]*?)^```\n/gm)) {
      expect(found.has(match[1]!), `snippet ${match[1]} appears twice`).toBe(false);
      found.set(match[1]!, match[2]!);
    }
  }
  return found;
}

describe('reconnect recipes in the docs', () => {
  it('each snippet is the recipe file the tests run, and every recipe is shown', () => {
    const shown = snippets();
    const files = readdirSync(RECIPES)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3))
      .sort();
    expect([...shown.keys()].sort()).toEqual(files);
    for (const name of files) {
      expect(shown.get(name), name).toBe(readFileSync(join(RECIPES, `${name}.ts`), 'utf8'));
    }
  });
});
