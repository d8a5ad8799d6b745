/**
 * `nodes(ids:)` and `_entities(representations:)` cost in proportion to their input: counted per
 * id (up to the cap) in the query cost, capped at 100 ids (FIXED_MAX_NODE_IDS) before any upstream
 * call, and
 * message ids found through one per-request index (one owned-numbers call and one history window
 * per number, however many ids).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../src/simulator/index.js';
import { basicAuth, executeText, startStack } from '../fixtures/harness.js';

const NODES = 'query Nodes($ids: [ID!]!) { nodes(ids: $ids) { id ... on Message { body } } }';
const ENTITIES =
  'query E($representations: [_Any!]!) { _entities(representations: $representations) { __typename } }';
const auth = basicAuth(DEMO_CREDENTIALS);
const messageIds = DEMO_ACCOUNT.numbers.flatMap((n) =>
  n.messages.slice(0, 10).map((m) => m.message_id),
);
const fakeIds = (count: number) =>
  Array.from({ length: count }, (_, i) => i.toString(16).padStart(32, '0'));

type Stack = Awaited<ReturnType<typeof startStack>>;
let tight: Stack;
let generous: Stack;
let startedDefaults: Stack;
beforeAll(async () => {
  startedDefaults = await startStack();
  // A cost limit that 80 ids reach (the default, 100,000, is past the id cap and the body limit).
  tight = await startStack({}, { limits: { maxCost: 50 } });
  // A cost limit high enough that the 100-id cap is what refuses.
  generous = await startStack({}, { limits: { maxCost: 10_000 } });
});
afterAll(async () => {
  await tight.close();
  await generous.close();
  await startedDefaults.close();
});
beforeEach(() => {
  tight.simulator.resetCalls();
  generous.simulator.resetCalls();
  startedDefaults.simulator.resetCalls();
});

describe('nodes(ids:)', () => {
  it('counts each id in the query cost: 80 ids are refused before any upstream call', async () => {
    const { status, body } = await executeText(tight.gateway, NODES, { ids: fakeIds(80) }, auth);
    expect(status).toBe(400);
    expect(body.errors?.[0]?.message).toBe(
      'Query cost limit of 50 exceeded: this operation may return or fetch 80 items ' +
        '(objects, each list counted at its size; docs/limits.md): Query.nodes 80',
    );
    expect(tight.simulator.calls).toEqual([]);
  });

  it("counts ids past the cap at the cap: 2,500 ids are the cap's refusal, not the cost's", async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    // 2,500 ids, each reaching a page of 100 messages: 755,000 items if every id counted.
    const query = `query Nodes($ids: [ID!]!) {
      nodes(ids: $ids) { ... on Number { messages(first: 100) { edges { node { id status { code } } } } } }
    }`;
    for (let i = 0; i < 5; i += 1) {
      const { body } = await executeText(
        startedDefaults.gateway,
        query,
        { ids: fakeIds(2_500) },
        auth,
      );
      expect(body.data).toBeNull();
      expect(body.errors).toMatchObject([
        {
          message: 'nodes: 2500 ids given, at most 100 allowed; split the lookup',
          path: ['nodes'],
          extensions: { code: 'BAD_USER_INPUT', argumentName: 'ids' },
        },
      ]);
    }
    expect(startedDefaults.simulator.calls).toEqual([]);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(50 * 1024 * 1024);
  });

  it('refuses more than 100 ids with BAD_USER_INPUT, before any upstream call', async () => {
    const { body } = await executeText(generous.gateway, NODES, { ids: fakeIds(101) }, auth);
    expect(body.errors?.[0]).toMatchObject({
      message: 'nodes: 101 ids given, at most 100 allowed; split the lookup',
      extensions: { code: 'BAD_USER_INPUT', argumentName: 'ids' },
    });
    expect(generous.simulator.calls).toEqual([]);
  });

  it('finds many message ids with one owned-numbers call and one history window per number', async () => {
    expect(messageIds.length).toBeGreaterThanOrEqual(20);
    const ids = [...messageIds, ...fakeIds(5)];
    const { body } = await executeText<{ nodes: ({ id: string } | null)[] }>(
      generous.gateway,
      NODES,
      { ids },
      auth,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.nodes.map((n) => n?.id ?? null)).toEqual([
      ...messageIds,
      ...fakeIds(5).map(() => null),
    ]);
    const operations = generous.simulator.calls.map((c) => c.operation);
    expect(operations.filter((o) => o === 'allownednumbers')).toHaveLength(1);
    expect(operations.filter((o) => o === 'smshistory')).toHaveLength(DEMO_ACCOUNT.numbers.length);
    expect(operations).toHaveLength(1 + DEMO_ACCOUNT.numbers.length);
  });
});

describe('_entities', () => {
  it('counts each representation in the cost and refuses more than 100', async () => {
    const representations = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ __typename: 'Message', id: fakeIds(count)[i] }));
    const costly = await executeText(
      tight.gateway,
      ENTITIES,
      { representations: representations(80) },
      auth,
    );
    expect(costly.body.errors?.[0]?.message).toMatch(
      /^Query cost limit of 50 exceeded: this operation may return or fetch 80 items/,
    );
    const capped = await executeText(
      generous.gateway,
      ENTITIES,
      { representations: representations(101) },
      auth,
    );
    expect(capped.body.errors?.[0]).toMatchObject({
      message: '_entities: 101 representations given, at most 100 allowed; split the lookup',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(tight.simulator.calls).toEqual([]);
    expect(generous.simulator.calls).toEqual([]);
  });
});

describe('_entities representations', () => {
  const NUMBER_ENTITIES =
    'query E($representations: [_Any!]!) { _entities(representations: $representations) { ... on Number { tid } } }';

  it.each([
    [
      { __typename: 'Number' },
      '_entities: representation 1 (Number) needs "tid" or "number" as a string',
    ],
    [
      { __typename: 'Number', tid: 5 },
      '_entities: representation 1 (Number) needs "tid" or "number" as a string',
    ],
    [
      { __typename: 'Message', tid: 'TN-L-0001' },
      '_entities: representation 1 (Message) needs "id" as a string',
    ],
    [
      { __typename: 'Nope', tid: 'TN-L-0001' },
      '_entities: representation 1 has __typename "Nope": expected one of Message, Number',
    ],
    [
      { tid: 'TN-L-0001' },
      '_entities: representation 1 has __typename null: expected one of Message, Number',
    ],
    ['TN-L-0001', '_entities: representation 1 is not an object'],
  ])('%j is BAD_USER_INPUT with what is wrong, before any upstream call', async (bad, message) => {
    const { status, body } = await executeText(
      tight.gateway,
      NUMBER_ENTITIES,
      { representations: [{ __typename: 'Number', tid: 'TN-L-0001' }, bad] },
      auth,
    );
    expect(status).toBe(200);
    // _entities is non-null: the refusal takes the whole answer's data.
    expect(body.data).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({
      message,
      path: ['_entities'],
      extensions: { code: 'BAD_USER_INPUT', argumentName: 'representations' },
    });
    expect(tight.simulator.calls).toEqual([]);
  });

  it('still resolves well-formed representations by either key', async () => {
    const { body } = await executeText<{ _entities: ({ tid: string } | null)[] }>(
      tight.gateway,
      NUMBER_ENTITIES,
      {
        representations: [
          { __typename: 'Number', tid: 'TN-L-0001' },
          { __typename: 'Number', number: DEMO_ACCOUNT.numbers[1]?.number },
        ],
      },
      auth,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([
      { tid: 'TN-L-0001' },
      { tid: DEMO_ACCOUNT.numbers[1]?.tid },
    ]);
    expect(tight.simulator.calls.map((c) => c.operation)).toEqual(['allownednumbers']);
  });
});

describe('a list lookup costs what its variables say, request by request', () => {
  it('one document: 80 ids refused, then 5 ids answered, then 80 refused again', async () => {
    // The cost of a document is kept between requests only when no variable can change it.
    for (const [count, refused] of [
      [80, true],
      [5, false],
      [80, true],
    ] as const) {
      const { body } = await executeText(tight.gateway, NODES, { ids: fakeIds(count) }, auth);
      if (refused) expect(body.errors?.[0]?.message).toMatch(/^Query cost limit of 50 exceeded/);
      else expect(body.errors).toBeUndefined();
    }
    // The five ids were looked up (and not found): one owned-numbers call, one window per number.
    expect(tight.simulator.calls).toHaveLength(1 + DEMO_ACCOUNT.numbers.length);
  });
});
