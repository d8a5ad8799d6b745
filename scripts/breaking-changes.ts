/** The breaking changes between two schemas, as @graphql-inspector/core classifies them. */
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { buildSchema, type GraphQLSchema } from 'graphql';

export async function breakingChanges(
  released: GraphQLSchema | string,
  current: GraphQLSchema | string,
): Promise<Change[]> {
  const load = (s: GraphQLSchema | string) => (typeof s === 'string' ? buildSchema(s) : s);
  const changes = await diff(load(released), load(current));
  return changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
}
