/**
 * `_service { sdl }` printed when first asked: whatever the schema's own resolver said, the answer
 * is the subgraph printer's text for that schema, printed once however often it is asked.
 */
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { buildSchema, graphql, parse, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printServiceSdlOnDemand } from '../../src/graph/service-sdl.js';

/** A subgraph whose `_service` answers an eager text, as the bundle's no-op printer leaves it. */
function subgraph(): GraphQLSchema {
  const built = buildSubgraphSchema({
    typeDefs: parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
      type Query { greeting: Greeting }
      type Greeting @key(fields: "id") { id: ID! text: String! }
    `),
  });
  const service = built.getQueryType()?.getFields()._service;
  if (!service) throw new Error('the subgraph has no _service');
  service.resolve = () => ({ sdl: 'eager, from the build' });
  return built;
}

const ask = async (schema: GraphQLSchema): Promise<unknown> =>
  (await graphql({ schema, source: '{ _service { sdl } }' })).data;

describe('printServiceSdlOnDemand', () => {
  it("answers `_service { sdl }` with the subgraph printer's text", async () => {
    const schema = subgraph();
    expect(await ask(schema)).toEqual({ _service: { sdl: 'eager, from the build' } });
    printServiceSdlOnDemand(schema);
    const printed = printSubgraphSchema(schema);
    expect(printed).toContain('@key(fields: "id")');
    expect(await ask(schema)).toEqual({ _service: { sdl: printed } });
  });

  it('prints once: every request gets the same promised text', async () => {
    const schema = subgraph();
    printServiceSdlOnDemand(schema);
    const resolve = schema.getQueryType()?.getFields()._service?.resolve;
    if (!resolve) throw new Error('no resolver installed');
    const call = () => resolve(undefined, {}, undefined, undefined as never) as Promise<unknown>;
    const [first, second] = await Promise.all([call(), call()]);
    expect(first).toEqual(second);
    expect(first).toEqual({ sdl: printSubgraphSchema(schema) });
  });

  it('leaves a schema without `_service` as it was', async () => {
    const plain = buildSchema('type Query { hello: String }');
    const before = plain.getQueryType()?.getFields().hello?.resolve;
    expect(() => printServiceSdlOnDemand(plain)).not.toThrow();
    expect(plain.getQueryType()?.getFields()._service).toBeUndefined();
    expect(plain.getQueryType()?.getFields().hello?.resolve).toBe(before);
  });
});
