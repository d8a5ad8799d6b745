/** Message history: History, Message and MessageStatus, and the Number.history field. */
import {
  isUnreadable,
  type History,
  type Message,
  type MessageDirection,
  type MessageRecord,
  type MessageStatus,
} from '../core/domain.js';
import { badUserInput } from '../core/errors.js';
import { UPSTREAM_CALL_COST } from './cost.js';
import { builder } from './builder.js';
import { NumberRef } from './numbers.js';

const MessageDirectionEnum = builder.enumType('MessageDirection', {
  description: 'Which way a message travelled, seen from the owned number.',
  values: {
    OUTBOUND: { value: 'OUTBOUND', description: 'Sent from the owned number.' },
    INBOUND: { value: 'INBOUND', description: 'Received by the owned number.' },
    UNKNOWN: {
      value: 'UNKNOWN',
      description: 'A direction the SMS service reported that this gateway does not recognise.',
    },
  } as const satisfies Record<MessageDirection, unknown>,
});

const MessageStatusRef = builder.objectRef<MessageStatus>('MessageStatus').implement({
  // A value type another subgraph (e.g. a delivery-reports one) may define too.
  shareable: true,
  description:
    'Delivery status: the service sends a code followed by text, e.g. "200 Message delivered".',
  fields: (t) => ({
    code: t.exposeInt('code', {
      nullable: true,
      description:
        'The status code: 200 means success, 400 an error; other codes are passed on. Null if none was sent.',
    }),
    text: t.exposeString('text', { description: 'The explanation that follows the code.' }),
    ok: t.exposeBoolean('ok', { description: 'True when the code is a success code (2xx).' }),
    raw: t.exposeString('raw', {
      // The service's wording, for support tools; a contract graph can leave it out by tag.
      tag: 'internal',
      description: 'The status exactly as the SMS service sent it.',
    }),
  }),
});

export const MessageRef = builder.objectRef<Message>('Message').implement({
  description: 'One SMS or MMS message.',
  fields: (t) => ({
    // `id` (the Node id, which is the service's message id) is added in nodes.ts.
    systemId: t.exposeID('systemId', {
      description:
        "The service's numeric system identifier (system_id); `History.mostRecentSystemId` names " +
        'the newest message by this one.',
    }),
    sentAt: t.expose('sentAt', {
      type: 'DateTime',
      description: 'When the message was sent, in UTC.',
    }),
    tid: t.exposeID('tid', {
      description: 'Identifier of the owned number the message belongs to.',
    }),
    phone: t.exposeString('phone', { description: 'Phone number of the other party.' }),
    direction: t.field({
      type: MessageDirectionEnum,
      description: 'Which way the message travelled.',
      resolve: (m) => m.direction,
    }),
    body: t.exposeString('body', { description: 'The message text.' }),
    mms: t.exposeBoolean('mms', { description: 'True for a picture message (MMS).' }),
    mediaUrl: t.exposeString('mediaUrl', {
      nullable: true,
      description: 'URL of the attached media; null when there is none.',
    }),
    status: t.field({
      type: MessageStatusRef,
      description: 'Delivery status.',
      resolve: (m) => m.status,
    }),
  }),
});

/**
 * What a list item resolves to: the message, or for an unreadable record its error, which
 * graphql-js turns into a null item with the error at that item's path (the rest of the list,
 * and of the answer, is served).
 */
export function messageOrError(record: MessageRecord): Message {
  return isUnreadable(record) ? (record.error as unknown as Message) : record;
}

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
    // The service's most_recent_msg_id is the newest message's numeric *system* id, not the
    // 32-hex message id that Message.id carries: the new name says so; the old stays for clients.
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
    extensions: UPSTREAM_CALL_COST,
    description:
      "A range of this number's message history. `start` and `end` go to the service unchanged as " +
      '`history_start` and `history_end`. Null (with an error at this path) when the service fails, ' +
      'so other numbers in the same answer are unaffected.',
    args: {
      start: t.arg.int({
        required: true,
        description:
          'Position of the first message to fetch (history_start), 0 or more; position 0 is the newest.',
      }),
      end: t.arg.int({
        required: true,
        description:
          'Sent to the service unchanged as history_end. The gateway reads it as exclusive, the ' +
          'position just past the last message: `end - start` is the count asked for (what ' +
          '`requestedCount` reports for a sliced range and MAX_HISTORY_RANGE limits), `end` equal ' +
          'to `start` asks for none, and when one request asks for several ranges of a number ' +
          'the gateway fetches them in one call and slices [start, end) out of it. The built-in ' +
          "simulator reads it the same way; the real service's reading is not documented: a " +
          'range fetched by a call of its own returns what the service sent. Refused ' +
          '(BAD_USER_INPUT) below `start` or more than MAX_HISTORY_RANGE after it.',
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
