/** The allow-list mode (PERSISTED_OPERATIONS): only listed operations run, read from a file. */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allowListPlugin, readPersistedOperations } from '../../../src/http/plugins/allow-list.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../../support/recording-upstream.js';
import {
  basicAuth,
  createTestGateway,
  postBody,
  type TestGateway,
} from '../../fixtures/harness.js';

const auth = basicAuth(DEMO_CREDENTIALS);
const QUERY = 'query Tids { ownedNumbers { tid } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const TIDS = DEMO_ACCOUNT.numbers.map((n) => ({ tid: n.tid }));

let simulator: RecordingUpstream;
let dir: string;
beforeAll(async () => {
  simulator = await startRecordingUpstream();
  dir = await mkdtemp(join(tmpdir(), 'persisted-'));
});
afterAll(async () => {
  await simulator?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => simulator.resetCalls());

const post = (test: TestGateway, body: unknown) => postBody(test.gateway, body, auth);

describe('allow-list (PERSISTED_OPERATIONS)', () => {
  it('runs listed operations by hash and refuses everything else, before any upstream call', async () => {
    const path = join(dir, 'persisted-documents.json');
    await writeFile(path, JSON.stringify({ [sha256(QUERY)]: QUERY }));
    const test = createTestGateway(simulator.url, {
      persistedOperations: allowListPlugin(readPersistedOperations(path)),
    });
    try {
      const listed = await post(test, {
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256(QUERY) } },
      });
      expect(await listed.json()).toEqual({ data: { ownedNumbers: TIDS } });
      expect(simulator.calls).toHaveLength(1);

      // documentId, as Relay and GraphQL Code Generator's client preset send it.
      const byDocumentId = await post(test, { documentId: sha256(QUERY) });
      expect(await byDocumentId.json()).toEqual({ data: { ownedNumbers: TIDS } });
      expect(simulator.calls).toHaveLength(2);

      const arbitrary = await post(test, { query: '{ ownedNumbers { number } }' });
      expect(arbitrary.status).toBe(400);
      expect(await arbitrary.json()).toMatchObject({
        errors: [
          {
            message:
              'This gateway only runs persisted operations: send a known operation hash (documentId or extensions.persistedQuery)',
            extensions: { code: 'PERSISTED_QUERY_REQUIRED' },
          },
        ],
      });
      const unknown = await post(test, {
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ x }') } },
      });
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({
        errors: [
          {
            message: 'PersistedQueryNotFound: this operation is not in the allow-list',
            extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
          },
        ],
      });
      const unknownId = await post(test, { documentId: sha256('{ y }') });
      expect(await unknownId.json()).toMatchObject({
        errors: [{ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
      });
      // Registering a new operation the APQ way is not possible either.
      const register = await post(test, {
        query: '{ ownedNumbers { webhook } }',
        extensions: {
          persistedQuery: { version: 1, sha256Hash: sha256('{ ownedNumbers { webhook } }') },
        },
      });
      expect(((await register.json()) as { data?: unknown }).data ?? null).toBeNull();
      expect(simulator.calls).toHaveLength(2);
    } finally {
      await test.close();
    }
  });

  it('reads an Apollo persisted query manifest', async () => {
    const path = join(dir, 'manifest.json');
    await writeFile(
      path,
      JSON.stringify({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: sha256(QUERY), name: 'Tids', type: 'query', body: QUERY }],
      }),
    );
    expect([...readPersistedOperations(path)]).toEqual([[sha256(QUERY), QUERY]]);
  });

  it.each([
    ['not JSON', '{', /not valid JSON/],
    ['an array', '[]', /must be a JSON object/],
    [
      'a document that does not parse',
      JSON.stringify({ a: '{ ownedNumbers {' }),
      /entry "a" does not parse/,
    ],
    ['a non-string entry', JSON.stringify({ a: 1 }), /entry "a" must be a GraphQL document string/],
    ['no operations', '{}', /lists no operations/],
    [
      'a manifest without operations',
      JSON.stringify({ format: 'apollo-persisted-query-manifest' }),
      /no "operations" array/,
    ],
  ])('refuses a file that is %s, naming the file', async (_name, content, message) => {
    const path = join(dir, `bad-${Math.random()}.json`);
    await writeFile(path, content);
    expect(() => readPersistedOperations(path)).toThrow(message);
    expect(() => readPersistedOperations(path)).toThrow(path);
  });

  it('refuses a missing file', () => {
    expect(() => readPersistedOperations(join(dir, 'missing.json'))).toThrow(/cannot be read/);
  });
});
