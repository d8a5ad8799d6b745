/** The one SchemaBuilder. Types live in the files beside this one; src/schema/index.ts builds. */
import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import type { GatewayContext } from '../context.js';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  Scalars: { DateTime: { Input: Date; Output: Date } };
  DefaultFieldNullability: false;
}>({
  // Federation must come after plugins that wrap resolvers; directives is its prerequisite.
  plugins: [DirectivesPlugin, FederationPlugin],
  defaultFieldNullability: false,
});
