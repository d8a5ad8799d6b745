/**
 * scripts/compose-supergraph.ts, the composition docs/federation.md tells an operator to run,
 * in-process: it writes the same supergraph the router tests serve, refuses subgraphs that do
 * not compose (exit 1, nothing written) and bad arguments (exit 2, one line saying what).
 * test/e2e/compose-supergraph.test.ts runs it as the command the docs show.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  composeSupergraph,
  CompositionError,
  main,
  parseArguments,
  UsageError,
} from '../../scripts/compose-supergraph.js';
import { composeWithContacts, CONTACTS_SDL } from '../fixtures/federation.js';

const urls = { sms: 'http://127.0.0.1:1/graphql', contacts: 'http://127.0.0.1:2/graphql' };

let dir: string;
let contactsFile: string;
let conflictingFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compose-supergraph-'));
  contactsFile = join(dir, 'contacts.graphql');
  conflictingFile = join(dir, 'conflicting.graphql');
  await writeFile(contactsFile, CONTACTS_SDL);
  // The same subgraph with the key field typed differently: composition must refuse it.
  await writeFile(conflictingFile, CONTACTS_SDL.replace('tid: ID!', 'tid: Int!'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the command in-process: its exit code and what it said on stderr. */
async function run(args: readonly string[]) {
  const said: string[] = [];
  const spy = vi.spyOn(console, 'error').mockImplementation((line) => void said.push(String(line)));
  try {
    return { code: await main(args), stderr: said.join('\n') };
  } finally {
    spy.mockRestore();
  }
}

/** Runs the command on this subgraph and the contacts one read from `file`, writing `out`. */
const composeOut = (file: string, out: string) =>
  run(['--url', urls.sms, '--subgraph', `contacts,${urls.contacts},${file}`, '--out', out]);

describe('compose-supergraph, its main', () => {
  it('writes the supergraph: this subgraph (schema.graphql) with the one given', async () => {
    const out = join(dir, 'supergraph.graphql');
    const { code, stderr } = await composeOut(contactsFile, out);
    expect({ code, stderr }).toEqual({ code: 0, stderr: `Wrote ${out} (2 subgraphs)` });
    const written = await readFile(out, 'utf8');
    expect(written).toBe((await composeWithContacts(urls)).supergraphSdl);
    expect(written).toContain(`SMS @join__graph(name: "sms", url: "${urls.sms}")`);
  });

  it('exits 1 naming the composition error, and writes nothing', async () => {
    const out = join(dir, 'refused.graphql');
    const { code, stderr } = await composeOut(conflictingFile, out);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^composition failed:\n {2}FIELD_TYPE_MISMATCH: /);
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 on bad arguments, saying which', async () => {
    const { code, stderr } = await run(['--subgraph', `contacts,${urls.contacts},${contactsFile}`]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^--url is required\nusage: /);
  });
});

describe('compose-supergraph, its parts', () => {
  it('reads --subgraph as name, URL (commas and all) and file', () => {
    const parsed = parseArguments([
      '--url',
      urls.sms,
      '--subgraph',
      'contacts,http://127.0.0.1:2/graphql?a=1,2,./contacts.graphql',
      '--out',
      '-',
    ]);
    expect(parsed).toEqual({
      sms: { name: 'sms', url: urls.sms },
      others: [
        {
          name: 'contacts',
          url: 'http://127.0.0.1:2/graphql?a=1,2',
          sdlFile: './contacts.graphql',
        },
      ],
      out: '-',
    });
  });

  it.each([
    [['--url', urls.sms], /at least one --subgraph/],
    [['--url', urls.sms, '--subgraph', 'contacts,x.graphql'], /expected <name>,<url>,<sdl file>/],
    [['--url', 'sms.internal', '--subgraph', `c,${urls.contacts},c.graphql`], /is not a URL/],
    [['--url', 'ftp://h/g', '--subgraph', `c,${urls.contacts},c.graphql`], /not http or https/],
    [['--url', urls.sms, '--subgraph', `sms,${urls.contacts},c.graphql`], /sms given twice/],
    [['--url', urls.sms, '--subgraph', `a-b,${urls.contacts},c.graphql`], /letters, digits/],
    [['--url', urls.sms, '--subgraf', 'x'], /Unknown option '--subgraf'/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArguments(argv)).toThrow(UsageError);
    expect(() => parseArguments(argv)).toThrow(message);
  });

  it('says which file it cannot read, or cannot parse', async () => {
    const missing = join(dir, 'missing.graphql');
    await expect(
      composeSupergraph({
        sms: { name: 'sms', url: urls.sms },
        others: [{ name: 'contacts', url: urls.contacts, sdlFile: missing }],
      }),
    ).rejects.toThrow(new RegExp(`subgraph contacts: cannot read ${missing}`));
    const notSdl = join(dir, 'not-sdl.graphql');
    await writeFile(notSdl, 'type {');
    await expect(
      composeSupergraph({
        sms: { name: 'sms', url: urls.sms },
        others: [{ name: 'contacts', url: urls.contacts, sdlFile: notSdl }],
      }),
    ).rejects.toThrow(/subgraph contacts: .* is not GraphQL SDL \(Syntax Error/);
  });

  it('refuses a composition error with every error, by code', async () => {
    const refused = composeSupergraph({
      sms: { name: 'sms', url: urls.sms },
      others: [{ name: 'contacts', url: urls.contacts, sdlFile: conflictingFile }],
    });
    await expect(refused).rejects.toBeInstanceOf(CompositionError);
    await expect(refused).rejects.toMatchObject({
      errors: expect.arrayContaining([expect.stringMatching(/^FIELD_TYPE_MISMATCH: /)]),
    });
  });
});
