/**
 * Relay object identification: `Node`, `Query.node(id)` and `Query.nodes(ids)` for Number and
 * Message (ids: global-ids.ts). Every lookup reads with the caller's credentials, through the
 * request's loaders, so an id of another account resolves to null and never to its data.
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

// A federation entity too: another subgraph may reference a Message by its id. It resolves the
// way `node` does (a recent message of the caller's account, else null).
builder.asEntity(MessageRef, {
  key: builder.selection<{ id: string }>('id'),
  // Checks credentials synchronously, as Number's does: one UNAUTHENTICATED for the whole call.
  resolveReference: (ref, context) => {
    context.upstream();
    return findRecentMessage(ref.id, context).then(copy);
  },
});

function copy<T extends OwnedNumber | Message>(value: T | null): T | null {
  return value ? { ...value } : null;
}

/**
 * A copy (loader results may be shared), marked with its type here. The relay plugin marks what
 * it loads only once the whole batch is in, but caches the pending load per request at once: a
 * second alias of the same id (`node` or `nodes`) gets that promise, and its `Node` type was
 * resolved before the mark was set ("must resolve to an Object type at runtime").
 */
function typed<T extends OwnedNumber | Message>(
  value: T | null,
  typename: 'Number' | 'Message',
): T | null {
  const result = copy(value);
  // By name, as the plugin marks it again later (a mark can only be set again to the same value);
  // the signature takes refs and the builder's declared shapes, not names.
  brandWithType(result, typename as unknown as OutputType<SchemaTypes>);
  return result;
}

/**
 * The `id` fields as plain functions. The relay plugin resolves every global id through an async
 * function, so each Message in an answer cost a promise and its microtasks: 24,000 of them for
 * one aliased history query, most of what it allocated. Encoding is synchronous (global-ids.ts).
 */
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
