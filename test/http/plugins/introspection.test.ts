/** With GraphiQL off, introspection fails validation; __typename and _service stay answered. */
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useNoIntrospection } from '../../../src/http/plugins/introspection.js';

const yoga = createYoga({
  schema: createSchema({
    typeDefs: 'type Query { _service: Service } type Service { sdl: String }',
    resolvers: { Query: { _service: () => ({ sdl: 'type Query' }) } },
  }),
  plugins: [useNoIntrospection()],
  logging: false,
});

const ask = async (query: string) =>
  (await (
    await yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    })
  ).json()) as { data?: unknown; errors?: { message: string }[] };

describe('useNoIntrospection', () => {
  it('refuses __schema and __type', async () => {
    for (const query of ['{ __schema { types { name } } }', '{ __type(name: "Query") { name } }']) {
      const body = await ask(query);
      expect(body.data).toBeUndefined();
      expect(body.errors?.[0]?.message).toMatch(/introspection/i);
    }
  });

  it('answers __typename and the subgraph SDL a router composes from', async () => {
    expect(await ask('{ __typename _service { sdl } }')).toEqual({
      data: { __typename: 'Query', _service: { sdl: 'type Query' } },
    });
  });
});
