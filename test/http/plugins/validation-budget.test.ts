/**
 * Validation priced before it runs: documents whose rules would compare thousands of same-named
 * fields, or expand fragments past the budget, are refused as validation errors before any rule
 * runs, with no call made; documents a client has reason to send pass untouched.
 */
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../../src/config/config.js';
import { DEFAULT_GRAPHIQL_QUERY } from '../../../src/http/server.js';
import {
  MAX_EXPANDED_SELECTIONS,
  MAX_VALIDATION_WORK,
  validationBudgetError,
} from '../../../src/http/plugins/validation-budget.js';
import { DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { basicAuth, executeText, startStack } from '../../fixtures/harness.js';

const times = (n: number, make: (i: number) => string): string =>
  Array.from({ length: n }, (_, i) => make(i)).join(' ');

/** The shapes that cost 100-500 ms each to validate before the budget (a new name each time). */
const ATTACKS: Record<string, string> = {
  'one field 700 times': `query A { ownedNumbers { ${times(700, () => 'tid')} } }`,
  '30 inline fragments of 20': `query B { ownedNumbers { ${times(30, () => `... on Number { ${times(20, () => 'tid')} }`)} } }`,
  '__typename 700 times at the root': `query C { ${times(700, () => '__typename')} }`,
  '20 named fragments of 25 spread together': `query D { ownedNumbers { ${times(20, (i) => `...F${i}`)} } } ${times(20, (i) => `fragment F${i} on Number { ${times(25, () => 'tid')} }`)}`,
  'an invalid one, 600 fields and an unknown one': `query E { ownedNumbers { ${times(600, () => 'tid')} nope } }`,
  'same-named lists compared pairwise inside': `query F { ${times(25, () => `ownedNumbers { ${times(25, () => 'history(start: 0, end: 1) { totalCount }')} }`)} }`,
};

describe('validationBudgetError', () => {
  it.each(Object.entries(ATTACKS))('refuses %s', (_name, text) => {
    const error = validationBudgetError(parse(text));
    expect(error?.message).toMatch(
      /too (costly to validate|large once its fragments are expanded)/,
    );
    expect(error?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('passes the documents clients send: the GraphiQL default, colocated fragments', () => {
    expect(validationBudgetError(parse(DEFAULT_GRAPHIQL_QUERY))).toBeNull();
    // Relay-style: 20 components' fragments on one type, each asking for the id again.
    const colocated = `query G { ownedNumbers { ${times(20, (i) => `...C${i}`)} } } ${times(20, (i) => `fragment C${i} on Number { tid number messages(first: 3) { edges { cursor } } }`)}`;
    expect(validationBudgetError(parse(colocated))).toBeNull();
  });

  it('counts up to the budget, not past it: a document just over is refused, just under passes', () => {
    // n same-named leaves compare n(n-1)/2 pairs, after n flattened fields.
    const under = (n: number): string => `{ ownedNumbers { ${times(n, () => 'tid')} } }`;
    let n = 2;
    while ((n * (n - 1)) / 2 + n + 1 <= MAX_VALIDATION_WORK) n += 1;
    expect(validationBudgetError(parse(under(n - 1)))).toBeNull();
    expect(validationBudgetError(parse(under(n + 1)))).not.toBeNull();
  });

  it('bounds fragments spread in a doubling chain, and terminates on cycles', () => {
    // Each link spreads the next twice (as two aliases): 2^14 selections from 2 kB of text.
    const chain =
      `query H { ownedNumbers { ...L0 } } ` +
      times(
        14,
        (i) =>
          `fragment L${i} on Number { a${i}: messages(first: 1) { edges { node { ...L${i + 1} } } } b${i}: messages(first: 1) { edges { node { ...L${i + 1} } } } }`,
      ).replace(/\.\.\.L14/g, '') +
      ` fragment L14 on Message { body }`;
    const error = validationBudgetError(parse(chain.replace(/node \{ {2}\}/g, 'node { body }')));
    expect(error?.message).toContain(String(MAX_EXPANDED_SELECTIONS));
    const cycle =
      'query I { ownedNumbers { ...A } } fragment A on Number { tid ...B } fragment B on Number { ...A }';
    expect(validationBudgetError(parse(cycle))).toBeNull();
  });
});

describe('through the gateway', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    stack = await startStack({}, { limits: DEFAULT_LIMITS });
  });
  afterAll(() => stack.close());
  beforeEach(() => stack.simulator.resetCalls());

  it.each(Object.entries(ATTACKS))(
    'answers %s 400 with one clear error and no call',
    async (_n, text) => {
      const { status, body } = await executeText(
        stack.gateway,
        text,
        undefined,
        basicAuth(DEMO_CREDENTIALS),
      );
      expect(status).toBe(400);
      expect(body.errors).toHaveLength(1);
      expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
      expect(stack.simulator.calls).toHaveLength(0);
    },
  );
});
