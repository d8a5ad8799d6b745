/**
 * The built gateway (dist/, what `npm start` runs), rebuilt when any source, the build script or
 * the installed libraries (bundled into it) are newer than it, so tests that start the real
 * process never run yesterday's JavaScript.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST_MAIN = join(ROOT, 'dist', 'main.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    newest = Math.max(newest, mtime);
  }
  return newest;
}

export function distIsStale(): boolean {
  if (!existsSync(DIST_MAIN)) return true;
  const built = statSync(DIST_MAIN).mtimeMs;
  const sources = Math.max(
    newestMtime(join(ROOT, 'src')),
    statSync(join(ROOT, 'scripts', 'build.ts')).mtimeMs,
    statSync(join(ROOT, 'package-lock.json')).mtimeMs,
  );
  return sources > built;
}

/** Runs scripts/build.ts (as `npm ci` does) when dist/ is missing or stale. */
export function ensureBuilt(): void {
  if (!distIsStale()) return;
  const tsx = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  execFileSync(process.execPath, [tsx, join(ROOT, 'scripts', 'build.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
