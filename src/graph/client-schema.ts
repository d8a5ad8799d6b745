/** The schema for frontends: without the federation protocol, which client tools choke on. */
import { GraphQLObjectType, GraphQLSchema, isSpecifiedDirective } from 'graphql';

const FEDERATION_FIELDS = new Set(['_entities', '_service']);

/** Types that exist only for the federation protocol and `@link`. */
const FEDERATION_TYPE = /^(_Any|_Entity|_Service|FieldSet|link__.*|federation__.*)$/;

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
    types: config.types.filter((t) => !FEDERATION_TYPE.test(t.name) && t !== schema.getQueryType()),
    // Only graphql's own directives (@deprecated, @specifiedBy, ...); federation's go.
    directives: config.directives.filter(isSpecifiedDirective),
    astNode: undefined,
    extensionASTNodes: [],
  });
}
