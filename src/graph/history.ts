/** Message history: the History type and the Number.history field. */
import type { History } from '../core/domain.js';
import { badUserInput } from '../core/errors.js';
import { HISTORY_COST, HISTORY_LIST_SIZE } from './cost.js';
import { builder } from './builder.js';
import { MessageRef, messageOrError } from './message.js';
import { NumberRef } from './numbers.js';

const HistoryRef = builder.objectRef<History>('History').implement({
  description: 'A page of the message history of one owned number.',
  fields: (t) => ({
    tid: t.exposeID('tid', { description: 'Identifier of the owned number.' }),
    number: t.exposeString('number', { description: 'The owned phone number.' }),
    requestedCount: t.exposeInt('requestedCount', {
      description: 'How many records the service says were asked for.',
    }),
    totalCount: t.exposeInt('totalCount', {
      description: 'How many messages the service holds for this number.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the history was created, in UTC; null if the service sent none.',
    }),
    mostRecentSystemId: t.exposeID('mostRecentMessageId', {
      nullable: true,
      description:
        "The newest message's numeric system identifier (compare with `Message.systemId`, not " +
        '`Message.id`); null when there is none.',
    }),
    mostRecentMessageId: t.exposeID('mostRecentMessageId', {
      nullable: true,
      deprecationReason:
        'Use `mostRecentSystemId`: this is the numeric system id (`Message.systemId`), not `Message.id`.',
      description:
        "Same value as `mostRecentSystemId`: the newest message's numeric system identifier " +
        '(`Message.systemId`), despite the name.',
    }),
    mostRecentAt: t.expose('mostRecentAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the newest message was sent, in UTC; null when there is none.',
    }),
    optIn: t.exposeBoolean('optIn', {
      nullable: true,
      description:
        'Whether the number is opted in; null when the service sent an unrecognised value.',
    }),
    messages: t.field({
      type: [MessageRef],
      nullable: { list: false, items: true },
      description:
        'The records of the requested range, as the service returned them (newest first in the simulator). ' +
        'A record the service sent that cannot be read is null, with an UPSTREAM_ERROR at its index; ' +
        'the other messages are served.',
      resolve: (h) => h.messages.map(messageOrError),
    }),
  }),
});

builder.objectField(NumberRef, 'history', (t) =>
  t.field({
    type: HistoryRef,
    nullable: true,
    listSize: HISTORY_LIST_SIZE,
    extensions: HISTORY_COST,
    description:
      "A range of this number's message history, positions [start, end), 0 being the newest. " +
      'Null (with an error at this path) when the service fails, so other numbers in the same ' +
      'answer are unaffected.',
    args: {
      start: t.arg.int({
        required: true,
        description:
          'Position of the first message to fetch (history_start, inclusive), 0 or more; position 0 is the newest.',
      }),
      end: t.arg.int({
        required: true,
        description:
          'Exclusive: the position just past the last message, so `end - start` is the count ' +
          'asked for (what `requestedCount` reports for a sliced range and MAX_HISTORY_RANGE ' +
          'limits) and `end` equal to `start` asks for none. The gateway sends the service its ' +
          'own reading of history_end (UPSTREAM_HISTORY_END: `end` itself, or `end - 1` for a ' +
          'service that reads it inclusively) and serves exactly [start, end); when one request ' +
          'asks for several ranges of a number, it fetches them in one call and slices each out ' +
          'of it. Refused (BAD_USER_INPUT) below `start` or more than MAX_HISTORY_RANGE after it.',
      }),
    },
    resolve: (number, { start, end }, context) => {
      const max = context.limits.maxHistoryRange;
      if (start < 0) throw badUserInput(`history: start must be 0 or more (got ${start})`, 'start');
      if (end < start)
        throw badUserInput(`history: end (${end}) must not be less than start (${start})`, 'end');
      if (end - start > max) {
        throw badUserInput(
          `history: the range ${start}..${end} is wider than the maximum of ${max}`,
          'end',
        );
      }
      return context.upstream().history({ tid: number.tid, number: number.number, start, end });
    },
  }),
);
