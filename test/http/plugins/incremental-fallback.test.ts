/** @defer for clients that cannot read parts: the whole result at once, never an empty 406. */
import { describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { sharedStack, basicAuth } from '../../fixtures/harness.js';

const stack = sharedStack();

const auth = basicAuth(DEMO_CREDENTIALS);

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
