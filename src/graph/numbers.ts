/**
 * Owned numbers: the Number entity and the root fields that list and find them, `number(tid)`
 * without a lookup when a page's cursor names the number (docs/paging.md "One call per page").
 */
import {
  Kind,
  valueFromASTUntyped,
  type FieldNode,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';
import type { NumberType, OwnedNumber } from '../core/domain.js';
import { OWNED_NUMBERS_LIST_SIZE } from './cost.js';
import { builder } from './builder.js';
import type { GatewayContext } from './context.js';
import { firstWindow, maxPageSize, planPage } from './paging.js';

export const NumberTypeEnum = builder.enumType('NumberType', {
  description: 'The kind of an owned phone number.',
  values: {
    LOCAL: { value: 'LOCAL', description: 'A local (geographic) number.' },
    TOLLFREE: { value: 'TOLLFREE', description: 'A toll-free number.' },
    UNKNOWN: {
      value: 'UNKNOWN',
      description: 'A type the SMS service reported that this gateway does not recognise.',
    },
  } as const satisfies Record<NumberType, unknown>,
});

export const NumberRef = builder.objectRef<OwnedNumber>('Number').implement({
  description: 'A phone number owned by the account, able to send and receive messages.',
  fields: (t) => ({
    tid: t.exposeID('tid', { description: "The service's identifier of this number." }),
    number: t.exposeString('number', {
      description: 'The phone number, as the SMS service writes it.',
    }),
    type: t.expose('type', {
      type: NumberTypeEnum,
      description: 'Whether the number is local or toll-free.',
    }),
    webhook: t.exposeString('webhook', {
      nullable: true,
      // Account configuration, not for every client: a contract graph can leave it out by tag.
      tag: 'internal',
      description: 'URL the SMS service calls for this number; null when none is set.',
    }),
    doorbellUrl: t.string({
      nullable: true,
      tag: 'internal',
      description:
        "The URL to set as this number's `webhook` at the SMS service: a call to it makes live " +
        'updates look at the number at once instead of waiting for the next poll. Signed for ' +
        'this number; relative (a path) when the gateway does not know its public address ' +
        '(GATEWAY_PUBLIC_URL). Null when live updates are off.',
      resolve: (n, _args, context) => context.live?.doorbell?.urlOf(n.tid) ?? null,
    }),
  }),
});

// A federation entity, by tid or by phone number (a contacts subgraph knows numbers, not tids).
builder.asEntity(NumberRef, {
  key: [builder.selection<{ tid: string }>('tid'), builder.selection<{ number: string }>('number')],
  // Not async: without credentials the whole `_entities` fails at once with one UNAUTHENTICATED.
  resolveReference: (ref, context) => {
    const upstream = context.upstream();
    if ('tid' in ref) return upstream.numberByTid(ref.tid);
    return upstream.ownedNumbers().then((numbers) => findByPhoneNumber(numbers, ref.number));
  },
});

/** The caller's number written as given, or else with the same digits ("+1 555-0100" = "15550100"). */
export function findByPhoneNumber(
  numbers: readonly OwnedNumber[],
  phone: string,
): OwnedNumber | null {
  const digits = (text: string) => text.replace(/\D/g, '');
  const wanted = digits(phone);
  return (
    numbers.find((n) => n.number === phone) ??
    (wanted === '' ? undefined : numbers.find((n) => digits(n.number) === wanted)) ??
    null
  );
}

builder.queryType({ description: 'Read access to an SMS/MMS account.' });

builder.queryFields((t) => ({
  ownedNumbers: t.field({
    type: [NumberRef],
    nullable: true,
    listSize: OWNED_NUMBERS_LIST_SIZE,
    description:
      'The numbers the account owns: of one type, or every number when `type` is left out. ' +
      'Null (with an error) when the SMS service cannot be read.',
    args: {
      type: t.arg({
        type: NumberTypeEnum,
        required: false,
        description: 'Only numbers of this type; leave out for every number.',
      }),
    },
    resolve: (_root, args, context) => context.upstream().ownedNumbers(args.type ?? undefined),
  }),
  number: t.field({
    type: NumberRef,
    nullable: true,
    description: 'One owned number by its identifier; null when the account has no such number.',
    args: {
      tid: t.arg.id({ required: true, description: "The service's identifier of the number." }),
    },
    // A page after the first names its number in its cursor: no lookup (numberFromCursor).
    resolve: async (_root, args, context, info) => {
      const tid = String(args.tid);
      const loaders = context.upstream();
      return (await numberFromCursor(tid, info, context)) ?? loaders.numberByTid(tid);
    },
  }),
}));

/*
 * `number(tid) { messages(after: c) }` without the owned-numbers lookup (docs/paging.md "One call
 * per page"): a page's cursors carry, signed, the phone number behind the tid and a tag of the
 * account they were issued to, so the next page reads the history at once. The lookup is still
 * made whenever the cursor cannot stand in for it: an older cursor without an owner, another
 * account's, a selection that needs more of the number than tid and phone number, or a first
 * read that fails (refused or revoked credentials, a number no longer owned), which then gets the
 * lookup's own answer: null, or the lookup's error.
 */
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

const argumentsOf = (field: FieldNode, variables: Record<string, unknown>) =>
  Object.fromEntries(
    (field.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, variables)]),
  );

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
    if (!owner || !context.cursors.isAccountTag(owner.account, credentials.sysId)) continue;
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
