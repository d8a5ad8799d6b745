/**
 * What a copy runs (sms_instance_info, the banner): package.json's version; from the sources, the
 * commit git names and no build time; 'unknown' where git cannot tell. What the build writes into
 * dist/ (esbuild's define) is below; the built process saying it, in test/e2e/bundle.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gatewayBuild, gatewayVersion, gitCommit } from '../../src/observability/version.js';
import { buildIdentity, identityDefines } from '../../scripts/build.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

describe('gatewayVersion', () => {
  it("is the gateway's package.json version, the same on every call", () => {
    expect(packageJson.name).toBe('sms-graphql-gateway');
    expect(gatewayVersion()).toBe(packageJson.version);
    expect(gatewayVersion()).toBe(gatewayVersion());
  });
});

describe('gatewayBuild, from the sources', () => {
  it('names the commit git has checked out, and no build time', () => {
    const build = gatewayBuild();
    expect(build.version).toBe(packageJson.version);
    expect(build.builtAt).toBe('unknown');
    if (!existsSync(join(ROOT, '.git'))) {
      // Sources copied without their history: nothing to name.
      expect(build.commit).toBe('unknown');
      return;
    }
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
    expect(build.commit).toMatch(/^[0-9a-f]{12}(-dirty)?$/);
    expect(head.startsWith(build.commit.slice(0, 12))).toBe(true);
  });

  it("gitCommit is null outside a checkout (the copy's label then says 'unknown')", () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-no-git-'));
    try {
      expect(gitCommit(dir)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the build's identity (scripts/build.ts)", () => {
  const at = new Date('2026-12-01T10:00:00.000Z');

  it("is git's commit and the build's time, as JavaScript string literals for define", () => {
    const identity = buildIdentity({}, at);
    expect(identity).toEqual({ commit: gitCommit(ROOT), builtAt: '2026-12-01T10:00:00.000Z' });
    expect(identityDefines(identity)).toEqual({
      __GATEWAY_COMMIT__: JSON.stringify(identity.commit),
      __GATEWAY_BUILT_AT__: '"2026-12-01T10:00:00.000Z"',
    });
  });

  it('takes BUILD_COMMIT where the files came without git (a container build)', () => {
    expect(buildIdentity({ BUILD_COMMIT: ' 89abcdef0123 ' }, at).commit).toBe('89abcdef0123');
    expect(buildIdentity({ BUILD_COMMIT: '' }, at).commit).toBe(gitCommit(ROOT));
  });
});
