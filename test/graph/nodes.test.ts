/**
 * Relay object identification (src/graph/nodes.ts): `node`/`nodes` refetch a Number or a recent
 * Message by its `id`, another account's ids resolve to null, ids this gateway did not issue are
 * BAD_USER_INPUT before any upstream call; and the `id` fields resolve without a promise.
 */
import { buildSchema, isObjectType, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { encodeGlobalId } from '../../src/graph/global-ids.js';
import { syncGlobalIds } from '../../src/graph/nodes.js';
import { schema } from '../../src/graph/schema.js';
import {
  DEMO_ACCOUNT,
  DEMO_CREDENTIALS,
  SECOND_DEMO_ACCOUNT,
  SECOND_DEMO_CREDENTIALS,
} from '../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../fixtures/harness.js';
import { ownedIds } from '../fixtures/node-ids.js';

const stack = sharedStack({}, {}, { resetCalls: true });

const auth = basicAuth(DEMO_CREDENTIALS);
const idsOf = (credentials = DEMO_CREDENTIALS) => ownedIds(stack.gateway, credentials);
const NODE = `
  query Node($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on Number { tid number }
      ... on Message { tid body systemId }
    }
  }
`;
const NODES = `query Nodes($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`;

describe('the id resolvers', () => {
  // The relay plugin's are async: a promise per Message of an answer (24,000 for one aliased
  // history query). These return the id itself.
  it.each([
    ['Number', { tid: 'TN-L-0001' }, encodeGlobalId('Number', 'TN-L-0001')],
    ['Message', { id: 'a'.repeat(32) }, 'a'.repeat(32)],
  ])('%s.id is resolved without a promise', (typename, source, id) => {
    const type = schema.getType(typename);
    const resolve = isObjectType(type) ? type.getFields().id?.resolve : undefined;
    expect(resolve?.(source, {}, {}, {} as GraphQLResolveInfo)).toBe(id);
  });
});

describe('node(id)', () => {
  it('refetches a Number by its id, as Relay does', async () => {
    const [first] = await idsOf();
    stack.simulator.resetCalls();
    const { body } = await executeText(stack.gateway, NODE, { id: first?.id }, auth);
    expect(body.errors).toBeUndefined();
    expect(body.data?.node).toEqual({
      __typename: 'Number',
      id: first?.id,
      tid: first?.tid,
      number: first?.number,
    });
    expect(stack.simulator.calls.map((c) => c.operation)).toEqual(['allownednumbers']);
  });

  it('refetches a recent Message by its id, reading the newest messages of each number', async () => {
    const numbers = await idsOf();
    const target = numbers[1];
    const messageId = target?.messages.edges[1]?.node.id;
    const demo = DEMO_ACCOUNT.numbers[1]?.messages[1];
    stack.simulator.resetCalls();
    const { body } = await executeText(stack.gateway, NODE, { id: messageId }, auth);
    expect(body.errors).toBeUndefined();
    expect(body.data?.node).toEqual({
      __typename: 'Message',
      id: messageId,
      tid: target?.tid,
      body: demo?.body,
      systemId: String(demo?.system_id),
    });
    // One owned-numbers call, then one history window per number.
    expect(stack.simulator.calls.map((c) => c.operation).sort()).toEqual(
      ['allownednumbers', ...numbers.map(() => 'smshistory')].sort(),
    );
  });

  it("resolves another account's Number and Message ids to null, never to their data", async () => {
    const [theirs] = await idsOf(SECOND_DEMO_CREDENTIALS);
    const theirMessage = theirs?.messages.edges[0]?.node.id;
    const mine = (await idsOf())[0];
    stack.simulator.resetCalls();
    const { body } = await executeText(
      stack.gateway,
      NODES,
      { ids: [theirs?.id, mine?.id, theirMessage] },
      auth,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.nodes).toEqual([null, { __typename: 'Number', id: mine?.id }, null]);
    expect(SECOND_DEMO_ACCOUNT.numbers.some((n) => n.tid === theirs?.tid)).toBe(true);
    // Every call was made with the caller's own credentials.
    expect(new Set(stack.simulator.calls.map((c) => c.accountSysId))).toEqual(
      new Set([DEMO_CREDENTIALS.sysId]),
    );
  });

  it('resolves the same ids in several aliases of node and nodes alike, in one request', async () => {
    const [number] = await idsOf();
    const messageId = number?.messages.edges[0]?.node.id;
    const ids = [number?.id, messageId];
    const expected = [
      { __typename: 'Number', id: number?.id },
      { __typename: 'Message', id: messageId },
    ];
    // Each alias after the first got the first one's lookup before its type was known.
    const { body } = await executeText(
      stack.gateway,
      `query Aliases($ids: [ID!]!, $number: ID!, $message: ID!) {
        a: nodes(ids: $ids) { __typename id }
        b: nodes(ids: $ids) { __typename id }
        c: node(id: $number) { __typename id }
        d: node(id: $number) { __typename id }
        e: node(id: $message) { __typename id }
        f: node(id: $message) { __typename id }
      }`,
      { ids, number: number?.id, message: messageId },
      auth,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      a: expected,
      b: expected,
      c: expected[0],
      d: expected[0],
      e: expected[1],
      f: expected[1],
    });
  });

  it.each([
    ['not base64', 'not an id!'],
    ['an unknown type', Buffer.from('Account:1').toString('base64')],
    ['no type prefix', Buffer.from('TN-L-0001').toString('base64')],
    ['an empty id', Buffer.from('Number:').toString('base64')],
    ['a bare tid', 'TN-L-0001'],
  ])('refuses an id with %s as BAD_USER_INPUT, calling nothing', async (_case, id) => {
    const { body } = await executeText(stack.gateway, NODE, { id }, auth);
    expect(body.data?.node).toBeNull();
    expect(body.errors?.map((e) => ({ path: e.path, code: e.extensions?.code }))).toEqual([
      { path: ['node'], code: 'BAD_USER_INPUT' },
    ]);
    expect(stack.simulator.calls).toEqual([]);
  });
});

describe('syncGlobalIds', () => {
  it('refuses a schema without the id fields it replaces', () => {
    expect(() => syncGlobalIds(buildSchema('type Query { a: Int }'))).toThrow(
      'Number.id is missing from the schema',
    );
  });
});
