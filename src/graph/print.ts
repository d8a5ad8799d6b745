import { printSubgraphSchema } from '@apollo/subgraph';
import { printSchema } from 'graphql';
import { toClientSchema } from './client-schema.js';
import { schema } from './schema.js';

/** The SDL as a federation router needs it: `@key` and `@link` survive (graphql's printSchema drops them). */
export function printGatewaySchema(): string {
  return `${printSubgraphSchema(schema).trim()}\n`;
}

/** The SDL for frontends: plain GraphQL, no federation directives or protocol fields. */
export function printClientSchema(): string {
  return `${printSchema(toClientSchema(schema)).trim()}\n`;
}
