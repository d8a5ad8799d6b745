/**
 * `Query.nodes(ids:)` and `Query._entities(representations:)`, made by Pothos plugins so wrapped
 * here: costed per id, refused past FIXED_MAX_NODE_IDS, and representations checked against the
 * `@key`s, so a malformed one is the caller's BAD_USER_INPUT, never a resolver's crash.
 */
import { isUnionType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { badUserInput } from '../core/errors.js';
import type { GatewayContext } from './context.js';
import type { CostExtensions, SizeLimits } from './cost.js';

const LIST_ARGUMENTS = { nodes: 'ids', _entities: 'representations' } as const;

/** Entity type name -> its keys, each key the list of fields it names (from `@key(fields:)`). */
type EntityKeys = ReadonlyMap<string, readonly (readonly string[])[]>;

/** As @pothos/plugin-directives keeps them in `extensions.directives`. */
type Directives = { readonly name: string; readonly args?: { readonly fields?: unknown } }[];

function entityKeys(schema: GraphQLSchema): EntityKeys {
  const union = schema.getType('_Entity');
  const keys = new Map<string, string[][]>();
  for (const type of isUnionType(union) ? union.getTypes() : []) {
    const directives = (type.extensions as { directives?: Directives }).directives ?? [];
    const fields = directives.flatMap((d) => (d.name === 'key' ? [d.args?.fields] : []));
    keys.set(
      type.name,
      fields.flatMap((f) => (typeof f === 'string' ? [f.trim().split(/\s+/)] : [])),
    );
  }
  return keys;
}

/** Null when the representation names a known entity by one of its keys; else what is wrong. */
function representationProblem(
  representation: unknown,
  index: number,
  keys: EntityKeys,
): string | null {
  const at = `_entities: representation ${index}`;
  if (typeof representation !== 'object' || representation === null) {
    return `${at} is not an object`;
  }
  const fields = representation as Record<string, unknown>;
  const typename = fields.__typename;
  const entityKeysOf = typeof typename === 'string' ? keys.get(typename) : undefined;
  if (!entityKeysOf) {
    return `${at} has __typename ${JSON.stringify(typename ?? null)}: expected one of ${[...keys.keys()].join(', ')}`;
  }
  if (entityKeysOf.some((key) => key.every((field) => typeof fields[field] === 'string'))) {
    return null;
  }
  const wanted = entityKeysOf.map((key) => key.map((f) => `"${f}"`).join(' and ')).join(' or ');
  return `${at} (${typename}) needs ${wanted} as a string`;
}

const maxNodeIds = (limits: SizeLimits) => limits.maxNodeIds;

export function boundListLookups(schema: GraphQLSchema): void {
  const fields = schema.getQueryType()?.getFields() ?? {};
  const keys = entityKeys(schema);
  for (const [fieldName, argumentName] of Object.entries(LIST_ARGUMENTS)) {
    const field = fields[fieldName];
    if (!field) continue;
    const costed: CostExtensions = { costListArgument: argumentName, costMaxSize: maxNodeIds };
    field.extensions = { ...field.extensions, ...costed };
    const resolve = field.resolve as GraphQLFieldResolver<unknown, GatewayContext> | undefined;
    if (!resolve) continue;
    field.resolve = (source, args: Record<string, unknown>, context: GatewayContext, info) => {
      const list = args[argumentName];
      const count = Array.isArray(list) ? list.length : 0;
      const max = context.limits.maxNodeIds;
      if (count > max) {
        throw badUserInput(
          `${fieldName}: ${count} ${argumentName} given, at most ${max} allowed; split the lookup`,
          argumentName,
        );
      }
      if (fieldName === '_entities') {
        for (let i = 0; Array.isArray(list) && i < list.length; i += 1) {
          const problem = representationProblem(list[i], i, keys);
          if (problem) throw badUserInput(problem, argumentName);
        }
      }
      return resolve(source, args, context, info);
    };
  }
}
