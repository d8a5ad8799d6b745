import { parse, type ScalarTypeDefinitionNode } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { builder } from './builder.js';

// RFC 3339 date-time, serialised in UTC (the service's timestamps are GMT). graphql-scalars'
// DateTime names no specification, so clients and codegen get the spec's URL from here.
const DATE_TIME_SPEC = 'https://scalars.graphql.org/andimarek/date-time';

builder.addScalarType('DateTime', DateTimeResolver, {
  specifiedByURL: DATE_TIME_SPEC,
  // The federation printer (schema.graphql) reads the AST, not specifiedByURL.
  astNode: parse(
    `${JSON.stringify(DateTimeResolver.description ?? '')} scalar DateTime @specifiedBy(url: "${DATE_TIME_SPEC}")`,
  ).definitions[0] as ScalarTypeDefinitionNode,
});
