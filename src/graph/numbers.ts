/** Owned numbers: the Number entity and the root fields that list and find them. */
import type { NumberType, OwnedNumber } from '../core/domain.js';
import { OWNED_NUMBERS_LIST_SIZE } from './cost.js';
import { builder } from './builder.js';

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
    type: t.field({
      type: NumberTypeEnum,
      description: 'Whether the number is local or toll-free.',
      resolve: (n) => n.type,
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
    resolve: (_root, args, context) => context.upstream().numberByTid(String(args.tid)),
  }),
}));
