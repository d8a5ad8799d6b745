/** Message, MessageStatus and MessageDirection: one message of a number's history. */
import {
  isUnreadable,
  type Message,
  type MessageDirection,
  type MessageRecord,
  type MessageStatus,
} from '../core/domain.js';
import { builder } from './builder.js';

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
    direction: t.expose('direction', {
      type: MessageDirectionEnum,
      description: 'Which way the message travelled.',
    }),
    body: t.exposeString('body', { description: 'The message text.' }),
    mms: t.exposeBoolean('mms', { description: 'True for a picture message (MMS).' }),
    mediaUrl: t.exposeString('mediaUrl', {
      nullable: true,
      description: 'URL of the attached media; null when there is none.',
    }),
    status: t.expose('status', { type: MessageStatusRef, description: 'Delivery status.' }),
  }),
});

/** The message, or an unreadable record's error: graphql-js nulls that item alone, with it. */
export function messageOrError(record: MessageRecord): Message {
  return isUnreadable(record) ? (record.error as unknown as Message) : record;
}
