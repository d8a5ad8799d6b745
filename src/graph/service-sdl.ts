/**
 * `_service { sdl }` printed on the first request, not at start: the printer is a large library
 * nothing else needs, so the bundle gives @pothos/plugin-federation a no-op one (scripts/build.ts)
 * and this resolver imports the real one when a router first asks.
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
