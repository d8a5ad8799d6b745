/**
 * Relay object identification: `Node`, `Query.node(id)` and `Query.nodes(ids)` for Number and
 * Message (ids: global-ids.ts). Every lookup reads with the caller's credentials, through the
 * request's loaders, so an id of another account resolves to null and never to its data.
 */
import type { Message, OwnedNumber } from '../domain.js';
import type { GatewayContext } from '../context.js';
import { builder } from './builder.js';
import { MessageRef } from './history.js';
import { NumberRef } from './numbers.js';
import { MAX_PAGE_SIZE } from './paging.js';

builder.nodeRef<OwnedNumber, string, typeof NumberRef>(NumberRef, {
  id: {
    resolve: (n) => n.tid,
    description:
      'Global id (Relay Node): names this number across types and accounts. Use it as the ' +
      "cache key; `tid` is the service's own identifier.",
  },
  // A copy: the plugin marks what it loads with its type, and loader results may be shared.
  loadOne: async (tid, context) => copy(await context.upstream().numberByTid(tid)),
});

builder.nodeRef<Message, string, typeof MessageRef>(MessageRef, {
  id: {
    resolve: (m) => m.id,
    description:
      "The service's message identifier (message_id, 32 hexadecimal characters), unique across " +
      'the service; also its global id (Relay Node). Not `systemId`.',
  },
  loadOne: async (id, context) => copy(await findRecentMessage(id, context)),
});

/**
 * The service finds messages only through a number's history, so a message id is looked for
 * among the newest MESSAGE_NODE_SCAN messages of each of the account's numbers: one
 * owned-numbers call plus one history call per number, shared with the request's other reads.
 * An older message resolves to null; page to it with `Number.messages` instead.
 */
export const MESSAGE_NODE_SCAN = MAX_PAGE_SIZE;

async function findRecentMessage(id: string, context: GatewayContext): Promise<Message | null> {
  const upstream = context.upstream();
  const numbers = await upstream.ownedNumbers();
  const end = Math.min(MESSAGE_NODE_SCAN, context.limits.maxHistoryRange);
  const reads = await Promise.allSettled(
    numbers.map((n) => upstream.history({ tid: n.tid, number: n.number, start: 0, end })),
  );
  for (const read of reads) {
    const found = read.status === 'fulfilled' && read.value.messages.find((m) => m.id === id);
    if (found) return found;
  }
  // Not found: say so only when every number could be read.
  const failed = reads.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return null;
}

function copy<T extends OwnedNumber | Message>(value: T | null): T | null {
  return value ? { ...value } : null;
}
