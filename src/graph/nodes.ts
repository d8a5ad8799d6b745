/**
 * Relay `Node`, `Query.node(id)` and `Query.nodes(ids)` for Number and Message (ids: global-ids.ts),
 * read with the caller's credentials: another account's id resolves to null.
 */
import { brandWithType, type OutputType, type SchemaTypes } from '@pothos/core';
import { isObjectType, type GraphQLSchema } from 'graphql';
import type { Message, OwnedNumber } from '../core/domain.js';
import { builder } from './builder.js';
import { encodeGlobalId } from './global-ids.js';
import { MessageRef } from './message.js';
import { NumberRef } from './numbers.js';
import { findRecentMessage } from './message-lookup.js';

const numberId = (n: OwnedNumber): string => n.tid;
const messageId = (m: Message): string => m.id;

builder.nodeRef<OwnedNumber, string, typeof NumberRef>(NumberRef, {
  id: {
    resolve: numberId,
    description:
      'Global id (Relay Node): names this number across types and accounts. Use it as the ' +
      "cache key; `tid` is the service's own identifier.",
  },
  loadOne: async (tid, context) => typed(await context.upstream().numberByTid(tid), 'Number'),
});

builder.nodeRef<Message, string, typeof MessageRef>(MessageRef, {
  id: {
    resolve: messageId,
    description:
      "The service's message identifier (message_id, 32 hexadecimal characters), unique across " +
      'the service; also its global id (Relay Node). Not `systemId`.',
  },
  loadOne: async (id, context) => typed(await findRecentMessage(id, context), 'Message'),
});

// A federation entity too, resolved as `node` is.
builder.asEntity(MessageRef, {
  key: builder.selection<{ id: string }>('id'),
  // Credentials checked synchronously, as Number's: one UNAUTHENTICATED for the whole call.
  resolveReference: (ref, context) => {
    context.upstream();
    return findRecentMessage(ref.id, context).then(copy);
  },
});

function copy<T extends OwnedNumber | Message>(value: T | null): T | null {
  return value ? { ...value } : null;
}

/**
 * A copy (loader results may be shared), marked with its type now: a second alias of the id gets
 * the pending load before the relay plugin marks it ("must resolve to an Object type at runtime").
 */
function typed<T extends OwnedNumber | Message>(
  value: T | null,
  typename: 'Number' | 'Message',
): T | null {
  const result = copy(value);
  // By name, as the plugin marks it again later (only the same value may be set again).
  brandWithType(result, typename as unknown as OutputType<SchemaTypes>);
  return result;
}

/** The `id` fields as plain functions: the relay plugin's cost a promise per Message resolved. */
export function syncGlobalIds(schema: GraphQLSchema): void {
  const ids: [string, (source: never) => string][] = [
    ['Number', numberId],
    ['Message', messageId],
  ];
  for (const [typename, rawId] of ids) {
    const type = schema.getType(typename);
    const field = isObjectType(type) ? type.getFields().id : undefined;
    if (!field) throw new Error(`${typename}.id is missing from the schema`);
    field.resolve = (source: unknown) => encodeGlobalId(typename, rawId(source as never));
  }
}
