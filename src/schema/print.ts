import { printSubgraphSchema } from '@apollo/subgraph';
import { schema } from './index.js';

/** The SDL as a federation router needs it: `@key` and `@link` survive (graphql's printSchema drops them). */
export function printGatewaySchema(): string {
  return `${printSubgraphSchema(schema).trim()}\n`;
}
