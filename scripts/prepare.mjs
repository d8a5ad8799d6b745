/**
 * `npm ci` / `npm install` run this (prepare): it builds dist/ (scripts/build.ts) when the build
 * tools are installed. A production install (`npm ci --omit=dev`) has neither tsx nor esbuild,
 * and needs no build there: dist/ bundles every library, so it is built where the dev
 * dependencies are (`npm ci`, CI, a build stage) and copied as it is (docs/development.md).
 * Plain JavaScript, so it runs without tsx.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const missing = ['tsx', 'esbuild'].filter((name) => {
  try {
    require.resolve(name);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  console.error(
    `prepare: ${missing.join(' and ')} not installed (dev dependencies omitted): dist/ not built. ` +
      'Build it with `npm ci && npm run build` and copy dist/; it needs no node_modules.',
  );
  process.exit(0);
}
const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], {
  cwd: new URL('..', import.meta.url),
  stdio: 'inherit',
});
process.exit(build.status ?? 1);
