/**
 * graphql-jit compiles a document on its second execution: one-off documents (exploration, or a
 * client sending distinct documents to make the gateway work) never pay for compiling.
 */
import * as graphqlJs from 'graphql';
import { execute, parse, type ExecutionResult } from 'graphql';
import { envelop, useEngine } from '@envelop/core';
import { describe, expect, it } from 'vitest';
import { MAX_JIT_FIELDS, useJit } from '../../../src/http/plugins/jit.js';
import { DEMO_ACCOUNT, DEMO_CREDENTIALS } from '../../../src/simulator/index.js';
import { basicAuth, executeText, sharedStack } from '../../fixtures/harness.js';
import { schema } from '../../../src/graph/schema.js';

/** graphql-jit marks the results it produced with the serialiser it generated for them. */
const compiled = (result: unknown): boolean =>
  typeof (result as { stringify?: unknown }).stringify === 'function';

describe('useJit', () => {
  const run = envelop({ plugins: [useEngine(graphqlJs), useJit()] });
  const once = async (document: ReturnType<typeof parse>): Promise<ExecutionResult> => {
    const { execute: executeFn, contextFactory } = run();
    return (await executeFn({
      schema,
      document,
      contextValue: await contextFactory(),
    })) as ExecutionResult;
  };

  it('runs a document on graphql-js the first time and compiled from the second on', async () => {
    const document = parse('{ __typename }');
    const first = await once(document);
    const second = await once(document);
    const third = await once(document);
    expect(first.data).toEqual({ __typename: 'Query' });
    expect(second.data).toEqual(first.data);
    expect([compiled(first), compiled(second), compiled(third)]).toEqual([false, true, true]);
  });

  it('counts each document by itself: another document is again not compiled at first', async () => {
    const a = parse('{ a: __typename }');
    const b = parse('{ b: __typename }');
    await once(a);
    expect(compiled(await once(b))).toBe(false);
    expect(compiled(await once(a))).toBe(true);
  });

  it('answers as graphql-js alone does, compiled or not', async () => {
    const document = parse('{ kind: __typename }');
    const alone = await execute({ schema, document });
    expect((await once(document)).data).toEqual(alone.data);
    expect((await once(document)).data).toEqual(alone.data);
  });
});

const stack = sharedStack();
const auth = basicAuth(DEMO_CREDENTIALS);

describe('field errors', () => {
  it('carry their locations compiled as on graphql-js', async () => {
    const query = '{ nodes(ids: ["not-an-id"]) { id } }';
    const answers = [];
    for (let i = 0; i < 3; i += 1) {
      answers.push((await executeText(stack.gateway, query, undefined, auth)).body.errors);
    }
    expect(answers[0]?.[0]).toMatchObject({ locations: [{ line: 1, column: 3 }] });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
});

describe('bad variables', () => {
  it('are answered as graphql-js answers them (400, its words), compiled or not', async () => {
    const query = 'query($n: Int) { ownedNumbers { messages(first: $n) { totalCount } } }';
    const answers = [];
    for (let i = 0; i < 3; i += 1) {
      const { status, body } = await executeText(stack.gateway, query, { n: 'two' }, auth);
      answers.push({ status, body });
    }
    expect(answers[0]?.status).toBe(400);
    // graphql-js says what the value is not; graphql-jit said "Expected type Int" besides.
    expect(answers[0]?.body.errors?.[0]?.message).toMatch(
      /^Variable "\$n" got invalid value "two"; Int cannot/,
    );
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
});

describe('lists left out past the byte ceiling', () => {
  const small = sharedStack({}, { limits: { maxResponseBytes: 1024 } });

  it('go out as one located error, compiled as on graphql-js', async () => {
    const histories = Array.from(
      { length: 5 },
      (_, i) => `h${i}: history(start: 0, end: 20) { messages { body } }`,
    );
    const query = `{ ownedNumbers {\n ${histories.join(' ')} } }`;
    const answers = [];
    for (let i = 0; i < 3; i += 1) {
      answers.push((await executeText(small.gateway, query, undefined, auth)).body.errors);
    }
    expect(answers[0]).toHaveLength(1);
    expect(answers[0]?.[0]).toMatchObject({
      locations: [{ line: 2 }],
      extensions: { code: 'RESPONSE_TOO_LARGE' },
    });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
});

describe('very large documents', () => {
  it(`run on graphql-js past ${MAX_JIT_FIELDS} fields, with the same answer as compiled ones`, async () => {
    const tid = DEMO_ACCOUNT.numbers[0]!.tid;
    const fields =
      'id systemId sentAt tid phone direction body mms mediaUrl status { code text ok raw }';
    const alias = (i: number) =>
      `h${i}: history(start: ${i}, end: ${i + 3}) { totalCount messages { ${fields} } }`;
    const aliases = Math.ceil(MAX_JIT_FIELDS / 14) + 1;
    const large = `{ number(tid: "${tid}") { ${Array.from({ length: aliases }, (_, i) => alias(i)).join(' ')} } }`;
    const big = await executeText<{ number: Record<string, unknown> }>(
      stack.gateway,
      large,
      undefined,
      auth,
    );
    expect(big.body.errors).toBeUndefined();
    for (let i = 0; i < aliases; i += 1) {
      const small = await executeText<{ number: Record<string, unknown> }>(
        stack.gateway,
        `{ number(tid: "${tid}") { ${alias(i)} } }`,
        undefined,
        auth,
      );
      expect(big.body.data?.number[`h${i}`]).toEqual(small.body.data?.number[`h${i}`]);
    }
  });
});
