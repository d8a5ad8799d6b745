/** Operations the schema cannot run: a clear 400, never a 500. */
import { describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../../fixtures/harness.js';

const stack = sharedStack();

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
