/**
 * Operations the schema cannot run and clients that cannot read parts: clear answers, never a 500
 * or an empty 406.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../src/simulator/index.js';
import { basicAuth, executeText, startStack } from './helpers/harness.js';

let stack: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const auth = basicAuth(DEMO_CREDENTIALS);

describe('operation types the schema has no root for', () => {
  it.each(['mutation { __typename }', 'mutation Save { save(id: 1) }'])(
    '%s is a 400 validation error that says why, with no upstream call',
    async (query) => {
      stack.simulator.resetCalls();
      const { status, body } = await executeText(stack.gateway, query, undefined, auth);
      expect(status).toBe(400);
      expect(body.errors).toEqual([
        expect.objectContaining({
          message:
            'This gateway has no mutations: the schema defines no mutation type. It offers queries and subscriptions.',
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        }),
      ]);
      expect(stack.simulator.calls).toHaveLength(0);
    },
  );
});

describe('@defer for a client that reads only JSON', () => {
  const query = '{ ownedNumbers { tid ... @defer { history(start: 0, end: 1) { totalCount } } } }';

  it.each(['application/json', 'application/graphql-response+json'])(
    'Accept: %s gets the whole result at once',
    async (accept) => {
      const response = await stack.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, ...auth },
        body: JSON.stringify({ query }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain(accept);
      const body = (await response.json()) as {
        data: { ownedNumbers: { tid: string; history: { totalCount: number } }[] };
      };
      expect(body.data.ownedNumbers).toEqual(
        DEMO_ACCOUNT.numbers.map((n) => ({
          tid: n.tid,
          history: { totalCount: n.messages.length },
        })),
      );
    },
  );

  it('a client that accepts multipart/mixed still gets the parts', async () => {
    const response = await stack.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', ...auth },
      body: JSON.stringify({ query }),
    });
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(await response.text()).toContain('"hasNext":true');
  });
});
