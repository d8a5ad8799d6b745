/**
 * The cost estimate in items, from the schema's @listSize: the figures docs/limits.md quotes,
 * and the ways a document can hide a list's size (fragments, variables, directives, repeats).
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/config.js';
import { estimateCost } from '../../src/graph/estimate-cost.js';
import { schema } from '../../src/graph/schema.js';
import { DEFAULT_GRAPHIQL_QUERY } from '../../src/http/server.js';

const cost = (query: string, variables?: Record<string, unknown>) =>
  estimateCost({ schema, document: parse(query), variables }).cost;

describe('the cost estimate', () => {
  it('lets everyday queries through far below the default limit', () => {
    expect(cost(DEFAULT_GRAPHIQL_QUERY)).toBe(4_000);
    const page =
      '{ number(tid: "T") { messages(first: 50) { totalCount edges { cursor node { id body } } pageInfo { endCursor } } } }';
    expect(cost(page)).toBe(103);
    // The soak's cache flood: 30 aliases of 1,000 messages (with status) on one number.
    const flood = Array.from(
      { length: 30 },
      (_, i) => `h${i}: history(start: 0, end: 1000) { messages { id status { code } } }`,
    ).join(' ');
    expect(cost(`{ number(tid: "T") { ${flood} } }`)).toBe(60_031);
    expect(60_031).toBeLessThan(DEFAULT_LIMITS.maxCost);
  });

  it('multiplies through fragments, inline fragments and variables', () => {
    const viaFragment = `
      query($end: Int!) { ownedNumbers { ...N } }
      fragment N on Number { history(start: 0, end: $end) { messages { ... on Message { id } } } }`;
    expect(cost(viaFragment, { end: 10 })).toBe(200 * (2 + 10));
    expect(cost(viaFragment, { end: 100 })).toBe(200 * (2 + 100));
  });

  it('follows @skip and @include', () => {
    const query =
      'query($all: Boolean!) { ownedNumbers { tid history(start: 0, end: 5) @include(if: $all) { totalCount } } }';
    expect(cost(query, { all: false })).toBe(200);
    expect(cost(query, { all: true })).toBe(200 + 200 * (1 + 5));
  });

  it('counts every id of nodes, repeated ones included, and a range from its start', () => {
    expect(cost('{ nodes(ids: ["a", "a", "a"]) { id } }')).toBe(3);
    expect(
      cost('{ number(tid: "T") { history(start: 900, end: 1000) { messages { id } } } }'),
    ).toBe(1 + 1 + 100);
  });

  it('counts a fragment spread twice into one selection set once, and stays fast', () => {
    // Each fragment spreads the next twice: 2^40 walks if each spread were walked again.
    const levels = Array.from(
      { length: 40 },
      (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
    ).join(' ');
    const query = `{ ...F0 } ${levels} fragment F40 on Query { ownedNumbers { tid } }`;
    const started = performance.now();
    expect(cost(query)).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("counts an argument past its field's maximum at that maximum, given the limits", () => {
    const limits = { maxHistoryRange: 1_000, maxNodeIds: 100 };
    const bounded = (query: string, given = limits) =>
      estimateCost({ schema, document: parse(query), limits: given }).cost;
    const page = '{ number(tid: "T") { messages(first: 100000) { totalCount } } }';
    const range = '{ number(tid: "T") { history(start: 0, end: 100000000) { totalCount } } }';
    const ids = `{ nodes(ids: ${JSON.stringify(Array.from({ length: 300 }, () => 'x'))}) { id } }`;
    // Past the maximum, the field refuses the argument itself (BAD_USER_INPUT), before any call.
    expect(bounded(page)).toBe(1 + 1 + 100);
    expect(bounded(range)).toBe(1 + 1 + 1_000);
    expect(bounded(ids)).toBe(100);
    // A page is a history range: MAX_HISTORY_RANGE below 100 bounds it too.
    expect(bounded(page, { maxHistoryRange: 50, maxNodeIds: 100 })).toBe(1 + 1 + 50);
    // Without the limits, as sent (how a router reads the directives).
    expect(cost(page)).toBe(1 + 1 + 100_000);
    expect(cost(ids)).toBe(300);
  });

  it('leaves __typename and introspection free', () => {
    expect(cost('{ __typename __schema { types { name } } }')).toBe(0);
  });
});
