/**
 * The compiled gateway (dist/, what `npm start` runs), rebuilt when any source is newer than
 * it, so tests that start the real process never run yesterday's JavaScript.
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
    statSync(join(ROOT, 'tsconfig.build.json')).mtimeMs,
  );
  return sources > built;
}

/** Runs `tsc -p tsconfig.build.json` (as `npm ci` does) when dist/ is missing or stale. */
export function ensureBuilt(): void {
  if (!distIsStale()) return;
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
