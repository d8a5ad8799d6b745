/**
 * Past the response ceiling, the many RESPONSE_TOO_LARGE errors of one answer go out as one, with
 * how many lists were left out; other errors are kept as they were.
 */
import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/core/errors.js';
import { useResponseCeiling } from '../../../src/http/plugins/response-ceiling.js';

const tooLarge = () =>
  new GraphQLError('The answer is too large', { extensions: { code: ErrorCode.ResponseTooLarge } });

const yoga = createYoga({
  schema: createSchema({
    typeDefs: 'type Query { list(n: Int!): [Int] other: Int }',
    resolvers: {
      Query: {
        list: (_: unknown, { n }: { n: number }) => (n === 0 ? [1, 2] : tooLarge()),
        other: () => new GraphQLError('something else'),
      },
    },
  }),
  plugins: [useResponseCeiling()],
  maskedErrors: false,
  logging: false,
});

async function ask(query: string) {
  const response = await yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as {
    data: Record<string, unknown>;
    errors: { message: string; path: string[]; extensions?: Record<string, unknown> }[];
  };
}

describe('useResponseCeiling', () => {
  it('sends the lists left out as one error, with their count, the nulls showing where', async () => {
    const body = await ask('{ a: list(n: 0) b: list(n: 1) c: list(n: 2) d: list(n: 3) other }');
    expect(body.data).toEqual({ a: [1, 2], b: null, c: null, d: null, other: null });
    const ceiling = body.errors.filter((e) => e.extensions?.code === ErrorCode.ResponseTooLarge);
    expect(ceiling).toHaveLength(1);
    expect(ceiling[0]).toMatchObject({ path: ['b'], extensions: { fieldsLeftOut: 3 } });
    expect(body.errors.map((e) => e.message)).toContain('something else');
  });

  it('leaves a single one as it is', async () => {
    const body = await ask('{ b: list(n: 1) }');
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]?.extensions).not.toHaveProperty('fieldsLeftOut');
  });
});
