/** Query and request limits refuse hostile input clearly, before any upstream call. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { getIntrospectionQuery } from 'graphql';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../../src/config/config.js';
import { DEFAULT_GRAPHIQL_QUERY } from '../../../src/http/server.js';
import { DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { basicAuth, executeText, startStack } from '../../fixtures/harness.js';

let stack: Awaited<ReturnType<typeof startStack>>;
const limits = {
  maxAliases: 8,
  maxDepth: 3,
  maxTokens: 400,
  maxDirectives: 6,
  maxCost: 1_000,
  maxBodyBytes: 10_000,
};
beforeAll(async () => {
  stack = await startStack({}, { limits });
});
afterAll(() => stack.close());
beforeEach(() => stack.simulator.resetCalls());

const auth = basicAuth(DEMO_CREDENTIALS);
let lastMessage: string | undefined;

async function refused(query: string, variables?: unknown) {
  const { status, body } = await executeText(stack.gateway, query, variables, auth);
  expect(stack.simulator.calls).toHaveLength(0);
  expect(body.data ?? null).toBeNull();
  expect(body.errors).toHaveLength(1);
  lastMessage = body.errors?.[0]?.message;
  return { status, error: body.errors?.[0] };
}

describe('document limits', () => {
  // Each refusal reads as the limit it is: never as a syntax error.
  afterEach(() => expect(lastMessage ?? '').not.toMatch(/Syntax Error/));

  it('aliases', async () => {
    const aliases = Array.from({ length: 9 }, (_, i) => `a${i}: ownedNumbers { tid }`).join(' ');
    const { status, error } = await refused(`{ ${aliases} }`);
    expect(status).toBe(400);
    expect(error).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(error?.message).toBe('Too many aliases: 9 in this document, at most 8 allowed.');
  });

  it('depth', async () => {
    const { status, error } = await refused(
      '{ ownedNumbers { history(start: 0, end: 1) { messages { id } } } }',
    );
    expect(status).toBe(400);
    expect(error).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(error?.message).toBe('Query too deep: 4 levels of fields, at most 3 allowed.');
  });

  it('depth through fragments', async () => {
    const { error } = await refused(`
      query Deep { ownedNumbers { ...A } }
      fragment A on Number { history(start: 0, end: 1) { ...B } }
      fragment B on History { messages { id } }
    `);
    expect(error?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(error?.message).toMatch(/^Query too deep: 4 levels/);
  });

  it('tokens', async () => {
    const { status, error } = await refused(`{ ${'__typename '.repeat(401)} }`);
    expect(status).toBe(400);
    // Counted while parsing, yet a limit, not a syntax error.
    expect(error).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(error?.message).toBe(
      'Document too long: more than 400 tokens (names, punctuation and values), the limit.',
    );
  });

  it('directives', async () => {
    const fields = Array.from({ length: 7 }, (_, i) => `f${i}: __typename @include(if: true)`).join(
      ' ',
    );
    const { status, error } = await refused(`{ ${fields} }`);
    expect(status).toBe(400);
    expect(error).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(error?.message).toBe('Too many directives: 7 in this document, at most 6 allowed.');
  });

  it('cost: a history range counts its items times the numbers it runs over', async () => {
    // ownedNumbers is charged at its assumed 200 numbers; each history at the 5 messages it
    // fetches, selected or not.
    const { status, error } = await refused(
      '{ ownedNumbers { tid history(start: 0, end: 5) { totalCount } } }',
    );
    expect(status).toBe(400);
    expect(error).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(error?.message).toBe(
      'Query cost limit of 1000 exceeded: this operation may return or fetch 1400 items ' +
        '(objects, each list counted at its size; docs/limits.md): ' +
        'Number.history (items fetched) 1000, Query.ownedNumbers 200, Number.history 200',
    );
  });

  it('cost: the message says what it charged, every id of nodes included', async () => {
    const ids = JSON.stringify(Array.from({ length: 100 }, () => 'x'));
    const { status, error } = await refused(
      `{ a: node(id: "x") { id } b: nodes(ids: ${ids}) { id } number(tid: "T") { history(start: 0, end: 900) { totalCount } } }`,
    );
    expect(status).toBe(400);
    expect(error?.message).toMatch(
      /may return or fetch 1003 items .*: Number\.history \(items fetched\) 900, Query\.nodes 100, Query\.node 1, Query\.number 1, Number\.history 1$/,
    );
  });

  it('cost: refused with 200 for Accept: application/json, like every validation error', async () => {
    const lists = Array.from({ length: 6 }, (_, i) => `h${i}: ownedNumbers { tid }`).join(' ');
    const { status, body } = await executeText(stack.gateway, `{ ${lists} }`, undefined, {
      ...auth,
      accept: 'application/json',
    });
    expect(status).toBe(200);
    expect(body.errors?.[0]?.message).toMatch(/fetch 1200 items .*: Query\.ownedNumbers 1200$/);
  });

  it('cost follows @skip and @include with the request variables', async () => {
    const histories = Array.from(
      { length: 5 },
      (_, i) => `h${i}: history(start: ${i}, end: ${i + 1}) @include(if: $all) { totalCount }`,
    ).join(' ');
    const query = `query($all: Boolean!) { ownedNumbers { tid ${histories} } }`;
    const cheap = await executeText(stack.gateway, query, { all: false }, auth);
    expect(cheap.body.errors).toBeUndefined();
    stack.simulator.resetCalls();
    const { error } = await refused(query, { all: true });
    expect(error?.message).toMatch(
      /cost limit of 1000 exceeded: this operation may return or fetch 2200 items/,
    );
  });

  describe('an argument past its own maximum, at the default cost limit', () => {
    let defaults: Awaited<ReturnType<typeof startStack>>;
    beforeAll(async () => {
      defaults = await startStack();
    });
    afterAll(() => defaults.close());
    beforeEach(() => defaults.simulator.resetCalls());

    // Each would cost over 100,000 items at the size asked; the field refuses the size itself.
    it.each([
      ['messages(first: 100000)', ['number', 'messages'], 'first'],
      ['messages(last: 1000000)', ['number', 'messages'], 'last'],
      ['history(start: 0, end: 100000000)', ['number', 'history'], 'end'],
    ])('%s is BAD_USER_INPUT on that field, with no history call', async (field, path, arg) => {
      const { body } = await executeText(
        defaults.gateway,
        `{ number(tid: "TN-L-0001") { tid ${field} { totalCount } } }`,
        undefined,
        auth,
      );
      expect(body.data).toEqual({ number: { tid: 'TN-L-0001', [path[1] ?? '']: null } });
      expect(body.errors).toMatchObject([
        { path, extensions: { code: 'BAD_USER_INPUT', argumentName: arg } },
      ]);
      expect(defaults.simulator.calls.filter((c) => c.operation === 'smshistory')).toEqual([]);
    });

    it('is counted at its maximum: a document too costly even so is still refused', async () => {
      const { body } = await executeText(
        defaults.gateway,
        '{ ownedNumbers { history(start: 0, end: 100000) { messages { id } } } }',
        undefined,
        auth,
      );
      expect(body.data ?? null).toBeNull();
      expect(body.errors).toMatchObject([
        {
          message: expect.stringMatching(
            /^Query cost limit of 100000 exceeded: this operation may return or fetch 200400 items/,
          ),
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        },
      ]);
      expect(defaults.simulator.calls).toEqual([]);
    });
  });

  it('lets the GraphiQL default query and the full introspection query through', async () => {
    const introspection = await executeText(stack.gateway, getIntrospectionQuery());
    expect(introspection.body.errors).toBeUndefined();
    const defaults = await startStack();
    try {
      const first = await executeText(defaults.gateway, DEFAULT_GRAPHIQL_QUERY, undefined, auth);
      expect(first.body.errors).toBeUndefined();
      const full = await executeText(
        defaults.gateway,
        getIntrospectionQuery({
          descriptions: true,
          specifiedByUrl: true,
          directiveIsRepeatable: true,
          inputValueDeprecation: true,
        }),
      );
      expect(full.body.errors).toBeUndefined();
    } finally {
      await defaults.close();
    }
    expect(DEFAULT_LIMITS.maxTokens).toBeGreaterThan(0);
  });
});

describe('HTTP limits', () => {
  const post = (body: string, headers: Record<string, string>) =>
    stack.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth, ...headers },
      body,
    });

  it('refuses a body over MAX_BODY_BYTES with 413', async () => {
    const body = JSON.stringify({
      query: '{ __typename }',
      variables: { pad: 'x'.repeat(12_000) },
    });
    const response = await post(body, { 'content-length': String(body.length) });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      errors: [
        { message: 'Request body too large', extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' } },
      ],
    });
  });

  it('counts a chunked body as it streams in (no Content-Length to trust)', async () => {
    const server = createServer(stack.gateway);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const chunk = JSON.stringify({
        query: '{ __typename }',
        variables: { pad: 'x'.repeat(12_000) },
      });
      const response = await request(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: Readable.from([chunk.slice(0, 6_000), chunk.slice(6_000)]),
      });
      expect(response.statusCode).toBe(413);
      await response.body.dump();
    } finally {
      server.closeAllConnections();
      server.close();
    }
    expect(stack.simulator.calls).toHaveLength(0);
  });

  it('refuses JSON batching (an array of operations)', async () => {
    const body = JSON.stringify([
      { query: '{ ownedNumbers { tid } }' },
      { query: '{ ownedNumbers { tid } }' },
    ]);
    const response = await post(body, { 'content-length': String(body.length) });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toMatch(
      /Invalid JSON body|batching is not supported|Expected params to be an object/i,
    );
    expect(stack.simulator.calls).toHaveLength(0);
  });
});
