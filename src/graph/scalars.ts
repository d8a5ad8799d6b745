import { GraphQLScalarType, parse, type ScalarTypeDefinitionNode } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { builder } from './builder.js';

// RFC 3339, in UTC; graphql-scalars' DateTime names no specification, so it is named here.
const DATE_TIME_SPEC = 'https://scalars.graphql.org/andimarek/date-time';

// Serialised as text: the Date it returned cost a toJSON call per timestamp, half of a page's time.
const DateTime = new GraphQLScalarType({
  ...DateTimeResolver.toConfig(),
  serialize(value) {
    const serialized: unknown = DateTimeResolver.serialize(value);
    return serialized instanceof Date ? serialized.toISOString() : serialized;
  },
});

builder.addScalarType('DateTime', DateTime, {
  specifiedByURL: DATE_TIME_SPEC,
  // The federation printer (schema.graphql) reads the AST, not specifiedByURL.
  astNode: parse(
    `${JSON.stringify(DateTimeResolver.description ?? '')} scalar DateTime @specifiedBy(url: "${DATE_TIME_SPEC}")`,
  ).definitions[0] as ScalarTypeDefinitionNode,
});
