/**
 * The Dockerfile's shape, read without a Docker engine: a build stage that installs from the
 * lockfile and builds, a runtime stage on a slim Node 20 image that installs nothing and takes
 * only the build's output, run by a user other than root; and a .dockerignore that sends the
 * builder what the build stage copies and nothing else (no node_modules, dist/, .env or .git).
 * What the runtime stage copies is started in test/e2e/dockerfile-copy.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/dist.js';
import {
  command,
  copies,
  environment,
  instructions,
  readDockerfile,
  runtimeStage,
} from '../fixtures/dockerfile.js';

const stages = readDockerfile();
const runtime = runtimeStage(stages);
const build = stages.find((stage) => stage.name === copies(runtime)[0]?.from);

/**
 * Whether the builder would be sent `path` (relative to the context), by .dockerignore's rules:
 * the last pattern matching the path or a folder above it decides; `!` sends it after all.
 */
function sent(path: string, rules = readFileSync(join(ROOT, '.dockerignore'), 'utf8')): boolean {
  const patterns = rules
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const glob = (negated ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
      const source = glob
        .split(/(\*\*|\*|\?)/)
        .map((part) =>
          part === '**'
            ? '.*'
            : part === '*'
              ? '[^/]*'
              : part === '?'
                ? '[^/]'
                : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
        )
        .join('');
      return { negated, pattern: new RegExp(`^${source}$`) };
    });
  const parts = path.replace(/^\.\/|\/$/g, '').split('/');
  const selfAndParents = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let excluded = false;
  for (const { negated, pattern } of patterns) {
    if (selfAndParents.some((p) => pattern.test(p))) excluded = !negated;
  }
  return !excluded;
}

describe('the Dockerfile', () => {
  it('builds in one stage with the lockfile and runs in another', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(build, 'the stage the runtime copies from').toBeDefined();
    const runs = instructions(build!, 'RUN').join('\n');
    expect(runs).toMatch(/\bnpm ci\b/);
    expect(runs).toMatch(/\bnpm run build\b/);
  });

  it('runs on a slim Node 20 image, installing nothing, as a user other than root', () => {
    expect(runtime.image).toMatch(/^node:20[-.\w]*-slim$|^node:20-slim$/);
    // dist/ bundles every library: no install, no node_modules in the image.
    expect(instructions(runtime, 'RUN')).toEqual([]);
    const user = instructions(runtime, 'USER').at(-1) ?? 'root';
    const [name = ''] = user.split(':');
    expect(['root', '0', '']).not.toContain(name);
    expect(environment(runtime).NODE_ENV).toBe('production');
    // node itself receives SIGTERM: no shell or npm in between.
    expect(command(runtime)).toEqual(['node', 'dist/main.js']);
  });

  it('copies into the runtime stage only dist/ and package.json, from the build stage', () => {
    const taken = copies(runtime).flatMap((copy) => {
      expect(copy.from).toBe(build!.name);
      return copy.sources.map((source) => source.replace(/^\/app\//, '').replace(/\/$/, ''));
    });
    expect(taken.sort()).toEqual(['dist', 'package.json']);
  });
});

describe('.dockerignore', () => {
  it('sends every path the build stage copies from the context', () => {
    const fromContext = copies(build!).filter((copy) => copy.from === null);
    const paths = fromContext.flatMap((copy) => copy.sources);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src']));
    for (const path of paths) expect(sent(path), path).toBe(true);
    expect(sent('src/main.ts')).toBe(true);
  });

  it('keeps node_modules, dist/, .env, .git and the tests out of the context', () => {
    for (const path of ['node_modules', 'node_modules/graphql/index.js', 'dist/main.js', '.env'])
      expect(sent(path), path).toBe(false);
    for (const path of ['.git/HEAD', 'test/app.test.ts', 'bench/run.ts', 'tmp/x'])
      expect(sent(path), path).toBe(false);
  });

  it('is read as the builder reads it (the reading can fail)', () => {
    expect(sent('src/main.ts', 'src\n')).toBe(false);
    expect(sent('src/main.ts', '*\n!src\n')).toBe(true);
    expect(sent('dist/main.js', '*\n!src\n')).toBe(false);
    expect(sent('a/b.env', '**/*.env\n')).toBe(false);
  });
});
