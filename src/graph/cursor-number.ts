/**
 * `number(tid) { messages(after: c) }` without the owned-numbers lookup (docs/paging.md "One call
 * per page"): a page's cursors carry, signed, the phone number behind the tid and a tag of the
 * account they were issued to, so the next page reads the history at once. The lookup is still
 * made whenever the cursor cannot stand in for it: an older cursor without an owner, another
 * account's, a selection that needs more of the number than tid and phone number, or a first
 * read that fails (refused or revoked credentials, a number no longer owned), which then gets the
 * lookup's own answer: null, or the lookup's error.
 */
import {
  Kind,
  valueFromASTUntyped,
  type FieldNode,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';
import type { OwnedNumber } from '../core/domain.js';
import type { GatewayContext } from './context.js';
import { firstWindow, maxPageSize, planPage } from './paging.js';

/** Fields of Number that need only the tid and the phone number (the rest need the lookup). */
const WITHOUT_LOOKUP = new Set(['__typename', 'id', 'tid', 'number', 'messages', 'history']);

/** The fields selected under `number(tid)`, through fragments, whatever their conditions. */
function selectedFields(info: GraphQLResolveInfo): FieldNode[] {
  const found: FieldNode[] = [];
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) found.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        visit(info.fragments[selection.name.value]?.selectionSet);
      }
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet);
  return found;
}

function argumentsOf(field: FieldNode, variables: Record<string, unknown>) {
  const args: Record<string, unknown> = {};
  for (const argument of field.arguments ?? []) {
    args[argument.name.value] = valueFromASTUntyped(argument.value, variables);
  }
  return args;
}

/**
 * The number `tid` names, from a cursor of this account in the selection's first paging
 * `messages` field, once the history window that page reads first has been read with the
 * request's credentials; null when the lookup must answer instead.
 */
export async function numberFromCursor(
  tid: string,
  info: GraphQLResolveInfo,
  context: GatewayContext,
): Promise<OwnedNumber | null> {
  const fields = selectedFields(info);
  if (fields.some((field) => !WITHOUT_LOOKUP.has(field.name.value))) return null;
  const { credentials, loaders } = context.account();
  for (const field of fields) {
    if (field.name.value !== 'messages') continue;
    const args = argumentsOf(field, info.variableValues);
    let plan;
    try {
      plan = planPage(args, tid, context.cursors, maxPageSize(context.limits));
    } catch {
      // Refused arguments: the field says so itself, after the lookup.
      continue;
    }
    const window = firstWindow(plan);
    if (window === null || !('cursor' in plan)) continue;
    const owner = plan.cursor.owner;
    if (!owner || owner.account !== context.cursors.accountTag(credentials.sysId)) continue;
    try {
      // The same window the page reads first: its own read is then served by the loader.
      await loaders.history({ tid, number: owner.number, ...window });
    } catch {
      return null;
    }
    // Only what a cursor knows; WITHOUT_LOOKUP keeps the other fields from being asked for.
    return { tid, number: owner.number, type: 'UNKNOWN', webhook: null };
  }
  return null;
}
