/**
 * What this copy runs (sms_instance_info, the spans, the start-up banner): package.json's version,
 * the commit and the build time. A build (scripts/build.ts) writes the commit and time into the
 * bundle; the sources ask git for the commit at start, and have no build time. Anything not known
 * is 'unknown', never a failed start.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'sms-graphql-gateway';
export const UNKNOWN = 'unknown';

// Replaced by esbuild's `define` in dist/ (scripts/build.ts); undeclared when the sources run.
declare const __GATEWAY_COMMIT__: string | undefined;
declare const __GATEWAY_BUILT_AT__: string | undefined;

export interface GatewayBuild {
  /** package.json's `version`. */
  readonly version: string;
  /** The commit, 12 hex digits, `-dirty` when built or run with uncommitted changes. */
  readonly commit: string;
  /** When dist/ was built (ISO 8601, UTC); 'unknown' from the sources. */
  readonly builtAt: string;
}

let version: string | undefined;
let build: GatewayBuild | undefined;

export function gatewayVersion(): string {
  return (version ??= findVersion());
}

export function gatewayBuild(): GatewayBuild {
  return (build ??= {
    version: gatewayVersion(),
    commit:
      typeof __GATEWAY_COMMIT__ === 'string'
        ? __GATEWAY_COMMIT__
        : (gitCommit(fileURLToPath(new URL('.', import.meta.url))) ?? UNKNOWN),
    builtAt: typeof __GATEWAY_BUILT_AT__ === 'string' ? __GATEWAY_BUILT_AT__ : UNKNOWN,
  });
}

/** The commit checked out at `dir` (`-dirty` with changes to tracked files); null without git. */
export function gitCommit(dir: string): string | null {
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5_000,
    }).trim();
  try {
    const commit = git('rev-parse', '--short=12', 'HEAD');
    if (!/^[0-9a-f]{7,40}$/.test(commit)) return null;
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return dirty ? `${commit}-dirty` : commit;
  } catch {
    // No git, or not a checkout.
    return null;
  }
}

function findVersion(): string {
  for (const up of ['../package.json', '../../package.json', '../../../package.json']) {
    try {
      const file = readFileSync(new URL(up, import.meta.url), 'utf8');
      const parsed = JSON.parse(file) as { name?: unknown; version?: unknown };
      if (parsed.name === PACKAGE_NAME && typeof parsed.version === 'string') return parsed.version;
    } catch {
      // Not here: look one folder higher.
    }
  }
  return UNKNOWN;
}
