/**
 * The schema as a frontend sees it, without the federation protocol: client tools (buildSchema,
 * relay-compiler, GraphQL Code Generator) choke on `@link`/`@key`.
 */
import {
  GraphQLObjectType,
  GraphQLSchema,
  isSpecifiedDirective,
  type GraphQLNamedType,
} from 'graphql';

const FEDERATION_FIELDS = new Set(['_entities', '_service']);

/** Types that exist only for the federation protocol and `@link`. */
function isFederationType(type: GraphQLNamedType): boolean {
  return (
    type.name === '_Any' ||
    type.name === '_Entity' ||
    type.name === '_Service' ||
    type.name === 'FieldSet' ||
    type.name.startsWith('link__') ||
    type.name.startsWith('federation__')
  );
}

export function toClientSchema(schema: GraphQLSchema): GraphQLSchema {
  const config = schema.toConfig();
  const queryConfig = schema.getQueryType()?.toConfig();
  const query = queryConfig
    ? new GraphQLObjectType({
        ...queryConfig,
        fields: Object.fromEntries(
          Object.entries(queryConfig.fields).filter(([name]) => !FEDERATION_FIELDS.has(name)),
        ),
      })
    : undefined;
  return new GraphQLSchema({
    ...config,
    query,
    types: config.types.filter((t) => !isFederationType(t) && t !== schema.getQueryType()),
    // Only graphql's own directives (@deprecated, @specifiedBy, ...); federation's go.
    directives: config.directives.filter(isSpecifiedDirective),
    astNode: undefined,
    extensionASTNodes: [],
  });
}
