/**
 * Automatic persisted queries (the Apollo link protocol), the default; the allow-list mode is in
 * test/http/plugins/allow-list.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import {
  startRecordingUpstream,
  type RecordingUpstream,
} from '../../support/recording-upstream.js';
import { basicAuth, createTestGateway, postBody, type TestGateway } from '../fixtures/harness.js';

const auth = basicAuth(DEMO_CREDENTIALS);
const QUERY = 'query Tids { ownedNumbers { tid } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const TIDS = DEMO_ACCOUNT.numbers.map((n) => ({ tid: n.tid }));

let simulator: RecordingUpstream;
beforeAll(async () => {
  simulator = await startRecordingUpstream();
});
afterAll(() => simulator.close());
beforeEach(() => simulator.resetCalls());

const post = (test: TestGateway, body: unknown) => postBody(test.gateway, body, auth);

describe('automatic persisted queries (default)', () => {
  it('follows the Apollo link protocol: hash only -> not found -> hash and query -> hash only works', async () => {
    const test = createTestGateway(simulator.url);
    try {
      const persistedQuery = { version: 1, sha256Hash: sha256(QUERY) };
      const first = await post(test, { extensions: { persistedQuery } });
      expect(await first.json()).toMatchObject({
        errors: [
          { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
        ],
      });
      expect(simulator.calls).toHaveLength(0);

      const second = await post(test, { query: QUERY, extensions: { persistedQuery } });
      expect(await second.json()).toEqual({ data: { ownedNumbers: TIDS } });

      const third = await test.gateway.fetch(
        `http://gateway.test/graphql?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery }))}`,
        { headers: { accept: 'application/json', ...auth } },
      );
      expect(await third.json()).toEqual({ data: { ownedNumbers: TIDS } });
    } finally {
      await test.close();
    }
  });

  it('refuses a query whose hash does not match', async () => {
    const test = createTestGateway(simulator.url);
    try {
      const response = await post(test, {
        query: QUERY,
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256('other') } },
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        errors: [{ extensions: { code: 'PERSISTED_QUERY_MISMATCH' } }],
      });
      expect(simulator.calls).toHaveLength(0);
    } finally {
      await test.close();
    }
  });
});
