/**
 * scripts/compose-supergraph.ts run as docs/federation.md shows it (`npx tsx ...`), in a scratch
 * directory: it writes supergraph.graphql there, and a Hive Gateway router serving that file
 * answers a query across both subgraphs. Its parts are tested in test/graph/.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import {
  CONTACTS,
  CONTACTS_SDL,
  listenOnLoopback,
  startContactsSubgraph,
  startRouter,
  type RunningContactsSubgraph,
  type RunningHttpServer,
} from '../fixtures/federation.js';
import { basicAuth, createTestGateway, type TestGateway } from '../fixtures/harness.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/compose-supergraph.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

let dir: string;
let simulator: RecordingUpstream;
let gateway: TestGateway;
let sms: RunningHttpServer;
let contacts: RunningContactsSubgraph;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compose-supergraph-'));
  simulator = await startRecordingUpstream();
  gateway = createTestGateway(simulator.url);
  sms = await listenOnLoopback((req, res) => void gateway.gateway(req, res));
  contacts = await startContactsSubgraph();
});

afterAll(async () => {
  await contacts?.close();
  await sms?.close();
  await gateway?.close();
  await simulator?.close();
  await rm(dir, { recursive: true, force: true });
});

it('writes supergraph.graphql that a router serves across both subgraphs', async () => {
  await writeFile(join(dir, 'contacts.graphql'), CONTACTS_SDL);
  const { stderr } = await promisify(execFile)(
    TSX,
    [SCRIPT, '--url', sms.url, '--subgraph', `contacts,${contacts.url},contacts.graphql`],
    { cwd: dir },
  );
  expect(stderr).toBe(`Wrote ${join(dir, 'supergraph.graphql')} (2 subgraphs)\n`);

  const router = await startRouter(await readFile(join(dir, 'supergraph.graphql'), 'utf8'));
  try {
    const response = await fetch(router.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...basicAuth(DEMO_CREDENTIALS) },
      body: JSON.stringify({ query: '{ contacts { name number { tid number } } }' }),
    });
    const body = (await response.json()) as {
      data?: { contacts: { name: string; number: { tid: string; number: string } | null }[] };
      errors?: unknown[];
    };
    expect(body.errors).toBeUndefined();
    // `name` from the contacts subgraph; `number` of each contact's Number from this gateway.
    expect(body.data?.contacts).toEqual(
      CONTACTS.map((c) => ({
        name: c.name,
        number: {
          tid: c.tid,
          number: DEMO_ACCOUNT.numbers.find((n) => n.tid === c.tid)?.number,
        },
      })),
    );
  } finally {
    await router.close();
  }
}, 30_000);
