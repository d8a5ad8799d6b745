/**
 * The layout of docs/development.md is the tree's: every path the map names exists, every folder
 * of src/ is named and its README opens with a one-line summary (and names only paths that
 * exist), test/ mirrors src/, no import in src/
 * runs back up a layer (the map's order), and what tests and benches share lives in support/,
 * which imports neither (nor do they import each other).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const map = readFileSync(join(ROOT, 'docs', 'development.md'), 'utf8');
const mapSection = map.slice(map.indexOf('## The map'), map.indexOf('## Tests'));

/** The layers, lowest first, as the map's table lists them. */
const layers = [...mapSection.matchAll(/^\|\s*`src\/([^`/]+)\/?`\s*\|/gm)].map((m) => m[1] ?? '');

const srcFolders = readdirSync(join(ROOT, 'src')).filter((entry) =>
  statSync(join(ROOT, 'src', entry)).isDirectory(),
);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

describe('docs/development.md map', () => {
  it('names only paths that exist', () => {
    const named = [...map.matchAll(/`((?:src|test|support|scripts|bench|docs)\/[^`*<]*)`/g)].map(
      (m) => m[1] ?? '',
    );
    expect(named.length).toBeGreaterThan(10);
    const missing = named.filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });

  it('names every folder of src/, each opening with a one-line README', () => {
    expect(srcFolders.filter((folder) => !layers.includes(folder))).toEqual([]);
    for (const folder of srcFolders) {
      const readme = readFileSync(join(ROOT, 'src', folder, 'README.md'), 'utf8').trim();
      const [summary, next] = readme.split('\n');
      expect(summary, folder).toMatch(new RegExp(`^# src/${folder} — \\S`));
      // A README with more than its summary (src/traffic's table) sets the summary apart.
      if (next !== undefined) expect(next, folder).toBe('');
      // And every path it names exists.
      const named = [...readme.matchAll(/`((?:src|test|support|scripts|bench|docs)\/[^`*<]*)`/g)];
      const missing = named.map((m) => m[1] ?? '').filter((path) => !existsSync(join(ROOT, path)));
      expect(missing, folder).toEqual([]);
    }
  });

  it('lists each file of a layer it names in backticks beside its folder', () => {
    // Files named in a row are looked up in that row's folder: a renamed file fails here.
    for (const row of mapSection.split('\n').filter((line) => /^\|\s*`src\//.test(line))) {
      const folder = /^\|\s*`(src\/[^`]+?)\/?`\s*\|/.exec(row)?.[1] ?? '';
      if (!statSync(join(ROOT, folder)).isDirectory()) continue;
      const files = [...row.matchAll(/`([a-z-]+\.ts)`/g)].map((m) => m[1] ?? '');
      const absent = files.filter((file) => !existsSync(join(ROOT, folder, file)));
      expect(absent, folder).toEqual([]);
    }
  });

  it("names every file of a folder in that folder's row", () => {
    for (const row of mapSection.split('\n').filter((line) => /^\|\s*`src\/[^`]+\/`/.test(line))) {
      const folder = /^\|\s*`(src\/[^`]+?)\/`/.exec(row)?.[1] ?? '';
      const named = new Set([...row.matchAll(/`([a-z-]+\.ts)`/g)].map((m) => m[1] ?? ''));
      const files = readdirSync(join(ROOT, folder)).filter(
        (file) => file.endsWith('.ts') && !file.endsWith('.d.ts'),
      );
      expect(
        files.filter((file) => !named.has(file)),
        folder,
      ).toEqual([]);
    }
  });
});

describe('test/ mirrors src/', () => {
  it('has a test folder for every src folder, and no test folder without a reason', () => {
    const testFolders = readdirSync(join(ROOT, 'test')).filter((entry) =>
      statSync(join(ROOT, 'test', entry)).isDirectory(),
    );
    const extra = new Set(['e2e', 'clients', 'docs', 'fixtures', 'gql']);
    expect(srcFolders.filter((folder) => !testFolders.includes(folder))).toEqual([]);
    expect(testFolders.filter((f) => !srcFolders.includes(f) && !extra.has(f))).toEqual([]);
  });
});

describe('imports in src/', () => {
  it('never run back up a layer', () => {
    const rank = (path: string): number => {
      const top = relative(join(ROOT, 'src'), path).split('/')[0] ?? '';
      if (top === 'app.ts') return layers.length;
      if (top === 'start.ts') return layers.length + 1;
      if (top === 'runtime.ts') return layers.length + 2;
      if (top === 'main.ts') return layers.length + 3;
      return layers.indexOf(top);
    };
    const upward: string[] = [];
    for (const file of walk(join(ROOT, 'src')).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
        const target = resolve(dirname(file), match[1] ?? '');
        if (rank(target) > rank(file))
          upward.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
      }
    }
    expect(layers).toEqual(expect.arrayContaining(['core', 'config', 'upstream', 'http']));
    expect(upward).toEqual([]);
  });
});

describe('support/, shared by tests and benches', () => {
  /** Files under `from` importing a relative path under any of `into`. */
  function importsInto(from: string, into: readonly string[]): string[] {
    const found: string[] = [];
    for (const file of walk(join(ROOT, from)).filter((f) => /\.m?ts$/.test(f))) {
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
        const target = relative(ROOT, resolve(dirname(file), match[1] ?? ''));
        if (into.some((folder) => target.startsWith(`${folder}/`)))
          found.push(`${relative(ROOT, file)} -> ${target}`);
      }
    }
    return found;
  }

  it('bench/ never imports test/, nor test/ bench/', () => {
    expect(importsInto('bench', ['test'])).toEqual([]);
    expect(importsInto('test', ['bench'])).toEqual([]);
  });

  it('support/ imports neither test/ nor bench/', () => {
    expect(importsInto('support', ['test', 'bench'])).toEqual([]);
  });
});
