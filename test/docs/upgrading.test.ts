/**
 * docs/upgrading.md and CHANGELOG.md hold to what the previous release was
 * (test/fixtures/previous-release/written-by-previous.json, recorded from its built process): this
 * release reads every variable it read; the newest changelog entry names each setting added since
 * and each Redis key prefix it did not write; the rollback table says, for each added setting,
 * whether the previous release refuses it at start (recorded from that release's own check).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APQ_KEY_PREFIX } from '../../src/cache/apq-store.js';
import { CACHE_KEY_PREFIX } from '../../src/cache/response-cache.js';
import { CONFIG_VARIABLES, RETIRED_VARIABLES } from '../../src/config/settings.js';
import { unknownVariables } from '../../src/config/unknown-variables.js';
import { ROOT } from '../../support/dist.js';
import { anchorsOf } from './markdown.js';

interface Previous {
  readonly commit: string;
  readonly settings: {
    readonly variables: readonly string[];
    readonly refusedAtStart: Readonly<Record<string, string | null>>;
  };
  readonly redis: readonly { readonly key: string }[];
}

const previous = JSON.parse(
  readFileSync(join(ROOT, 'test/fixtures/previous-release/written-by-previous.json'), 'utf8'),
) as Previous;
const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
const upgrading = readFileSync(join(ROOT, 'docs/upgrading.md'), 'utf8');
const RERECORD = 'run test/fixtures/previous-release/record.ts again (its header says how)';

/** The newest entry: from the first `## ` heading to the next. */
const newest = changelog.split(/^## /m)[1] ?? '';
/** Its `### name` part. */
const part = (name: string): string =>
  newest.split(/^### /m).find((p) => p.startsWith(`${name}\n`)) ?? '';

const added = CONFIG_VARIABLES.filter((name) => !previous.settings.variables.includes(name));

/** The rows of docs/upgrading.md's rollback table: setting -> what to do before rolling back. */
function rollbackRows(): Map<string, string> {
  const rows = new Map<string, string>();
  const section = upgrading.split(/^## Rolling back$/m)[1] ?? '';
  for (const [, name, action] of section.matchAll(/^\| `([A-Z][A-Z0-9_]+)` +\| ([^|]+?) +\|/gm))
    rows.set(name ?? '', action ?? '');
  return rows;
}

describe('upgrading from the previous release', () => {
  it('starts with its environment: every variable it read is read here, none refused', () => {
    expect(previous.settings.variables.length).toBeGreaterThan(30);
    expect(
      previous.settings.variables.filter((n) => !CONFIG_VARIABLES.includes(n as never)),
    ).toEqual([]);
    const env = Object.fromEntries(previous.settings.variables.map((name) => [name, '1']));
    expect(unknownVariables(env, CONFIG_VARIABLES, RETIRED_VARIABLES)).toEqual([]);
  });

  it("the newest changelog entry names each setting added since, under 'Settings'", () => {
    expect(added.length).toBeGreaterThan(0);
    const settings = part('Settings');
    expect(settings).not.toBe('');
    expect(added.filter((name) => !settings.includes(`\`${name}\``))).toEqual([]);
  });

  it('the rollback table has a row for each, and says unset where the previous release refuses it', () => {
    const rows = rollbackRows();
    expect([...rows.keys()].sort()).toEqual([...added].sort());
    for (const name of added) {
      expect(Object.hasOwn(previous.settings.refusedAtStart, name), `${name}: ${RERECORD}`).toBe(
        true,
      );
      const refused = previous.settings.refusedAtStart[name] !== null;
      expect(rows.get(name) === 'unset', `${name}: ${rows.get(name)}`).toBe(refused);
    }
  });

  it('the newest changelog entry names each Redis key prefix the previous release did not write', () => {
    const written = previous.redis.map(({ key }) => key);
    expect(written.length).toBeGreaterThan(0);
    const stored = part('Stored formats');
    for (const prefix of [APQ_KEY_PREFIX, CACHE_KEY_PREFIX]) {
      if (written.some((key) => key.startsWith(prefix))) continue;
      expect(stored, prefix).toContain(prefix.replace(/:$/, ''));
    }
    // Not vacuous: the APQ prefix moved since.
    expect(written.some((key) => key.startsWith(APQ_KEY_PREFIX))).toBe(false);
  });

  it('names the commit it starts from, as the fixture does', () => {
    expect(newest).toContain(`\`${previous.commit.slice(0, 7)}\``);
  });
});

describe('CHANGELOG.md links', () => {
  it('every relative link reaches a file, and its anchor a heading there', () => {
    const broken: string[] = [];
    for (const [, link = ''] of changelog.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      const [path = '', anchor] = link.split('#');
      const target = resolve(ROOT, path);
      if (!existsSync(target)) broken.push(`${link}: no such file`);
      else if (anchor && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
        broken.push(`${link}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it('docs/deploy.md sends an operator to docs/upgrading.md', () => {
    const deploy = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8');
    expect(deploy).toMatch(/\]\(upgrading\.md(#[a-z-]+)?\)/);
  });
});
