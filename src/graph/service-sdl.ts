/**
 * `_service { sdl }` (the federation protocol) printed on first request instead of at start.
 * Printing a subgraph's SDL takes @apollo/federation-internals, a large library nothing else
 * needs: @pothos/plugin-federation prints it eagerly while building the schema, so the production
 * bundle gives that plugin a no-op printer (scripts/build.ts) and this resolver, installed on the
 * built schema, imports the real printer when a router first asks. Run from the sources, the
 * plugin's eager SDL is simply replaced by the same text.
 */
import type { GraphQLSchema } from 'graphql';

export function printServiceSdlOnDemand(schema: GraphQLSchema): void {
  const service = schema.getQueryType()?.getFields()._service;
  if (!service) return;
  let sdl: Promise<string> | undefined;
  service.resolve = () => {
    // A CommonJS library: Node gives its exports as named ones, a bundle's chunk as `default`.
    sdl ??= import('@apollo/subgraph').then((loaded) => {
      const { printSubgraphSchema } = 'default' in loaded ? loaded.default : loaded;
      return printSubgraphSchema(schema);
    });
    return sdl.then((text) => ({ sdl: text }));
  };
}
