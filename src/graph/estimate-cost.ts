/**
 * The cost of an operation before it runs, in items (cost.ts), from `@listSize` and the fields'
 * CostExtensions. Not graphql-query-complexity: it sees one field at a time, while `sizedFields`
 * sizes a child list from its parent's arguments.
 */
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { CostExtensions, ListSize, SizeLimits } from './cost.js';

export interface CostEstimate {
  /** Items the answer may hold (and the service be asked for), every list at its stated size. */
  readonly cost: number;
  /** The same total, by field coordinate ("Number.history"), for a refusal that says why. */
  readonly byField: ReadonlyMap<string, number>;
}

interface EstimateRequest {
  readonly schema: GraphQLSchema;
  readonly document: DocumentNode;
  readonly variables?: Readonly<Record<string, unknown>> | null | undefined;
  readonly operationName?: string | null | undefined;
  /** A list argument past its maximum counts at it (the resolver refuses it); absent: as sent. */
  readonly limits?: SizeLimits | undefined;
}

/** Throws graphql-js's own error for variables that do not fit their arguments. */
export function estimateCost(request: EstimateRequest): CostEstimate {
  const { schema, document } = request;
  const variables = (request.variables ?? {}) as Record<string, unknown>;
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition);
    else if (
      definition.kind === Kind.OPERATION_DEFINITION &&
      (!request.operationName || definition.name?.value === request.operationName)
    ) {
      operation ??= definition;
    }
  }
  let cost = 0;
  const byField = new Map<string, number>();
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return { cost, byField };

  const charge = (coordinate: string, amount: number) => {
    if (amount === 0) return;
    cost += amount;
    byField.set(coordinate, (byField.get(coordinate) ?? 0) + amount);
  };

  const included = (node: FieldNode | SelectionSetNode['selections'][number]): boolean =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;

  // `sized`: sizes the parent's @listSize gives some child fields; `used` records which were met.
  // `spread`: fragments already walked into this selection set; as graphql-js does, one spread
  // twice counts once (nested double spreads would otherwise take exponential time).
  function walkSelections(
    set: SelectionSetNode,
    parent: GraphQLNamedType,
    factor: number,
    sized: ReadonlyMap<string, number> | null,
    used: Set<string> | null,
    spread: Set<string>,
  ): void {
    for (const selection of set.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        walkField(selection, parent, factor, sized, used);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition
          ? schema.getType(selection.typeCondition.name.value)
          : parent;
        walkSelections(selection.selectionSet, type ?? parent, factor, sized, used, spread);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // Also what keeps a cycle (refused by validation) from looping here.
        if (!fragment || spread.has(name)) continue;
        spread.add(name);
        const type = schema.getType(fragment.typeCondition.name.value) ?? parent;
        walkSelections(fragment.selectionSet, type, factor, sized, used, spread);
      }
    }
  }

  function walkField(
    node: FieldNode,
    parent: GraphQLNamedType,
    factor: number,
    sized: ReadonlyMap<string, number> | null,
    used: Set<string> | null,
  ): void {
    const name = node.name.value;
    // __typename and introspection cost nothing: they never reach the service.
    if (name.startsWith('__')) return;
    if (!isObjectType(parent) && !isInterfaceType(parent)) return;
    const field = parent.getFields()[name];
    if (!field) return;
    const coordinate = `${parent.name}.${name}`;
    const type = getNamedType(field.type);
    const extensions = field.extensions as CostExtensions & {
      directives?: { name: string; args: ListSize }[];
    };
    const listSize = extensions.directives?.find((d) => d.name === 'listSize')?.args;
    const args =
      listSize || extensions.costListArgument
        ? (getArgumentValues(field, node, variables) as Record<string, unknown>)
        : {};
    const max = request.limits && extensions.costMaxSize?.(request.limits);
    const bounded = (items: number) => (max === undefined ? items : Math.min(items, max));

    let size = 1;
    let childSizes: Map<string, number> | null = null;
    const imposed = sized?.get(name);
    if (extensions.costListArgument) {
      const list = args[extensions.costListArgument];
      size = bounded(Array.isArray(list) ? list.length : 0);
    } else if (imposed !== undefined) {
      used?.add(name);
      size = imposed;
    } else if (listSize?.sizedFields?.length) {
      const items = bounded(sliceSize(listSize, args, extensions));
      childSizes = new Map(listSize.sizedFields.map((child) => [child, items]));
    } else if (listSize) {
      size = bounded(sliceSize(listSize, args, extensions));
    }

    charge(coordinate, factor * size * (isCompositeType(type) ? 1 : 0));
    const childUsed = childSizes ? new Set<string>() : null;
    if (node.selectionSet) {
      walkSelections(node.selectionSet, type, factor * size, childSizes, childUsed, new Set());
    }
    // The items are fetched whether or not the client selects them.
    if (childSizes && childUsed?.size === 0) {
      charge(`${coordinate} (items fetched)`, factor * Math.max(...childSizes.values()));
    }
  }

  walkSelections(operation.selectionSet, root, 1, null, null, new Set());
  return { cost, byField };
}

/** The size a @listSize gives: the largest slicing argument sent, else its assumed size. */
function sliceSize(
  listSize: ListSize,
  args: Record<string, unknown>,
  extensions: CostExtensions,
): number {
  const given = (listSize.slicingArguments ?? [])
    .map((name) => args[name])
    .filter((value): value is number => typeof value === 'number');
  if (given.length === 0) return listSize.assumedSize ?? 1;
  const end = Math.max(...given);
  const start = extensions.costRangeStart ? args[extensions.costRangeStart] : undefined;
  return Math.max(0, typeof start === 'number' ? end - start : end);
}
