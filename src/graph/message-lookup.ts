/** Finding messages by id, for `node(id)`, `nodes(ids:)` and federation references. */
import type { GatewayContext } from './context.js';
import { isUnreadable, type Message, type MessageRecord } from '../core/domain.js';
import type { RequestLoaders } from '../upstream/loaders.js';
import { MAX_PAGE_SIZE } from './paging.js';

/**
 * The service finds messages only through a number's history, so a message id is looked for
 * among the newest MESSAGE_NODE_SCAN messages of each of the account's numbers: one
 * owned-numbers call plus one history call per number, shared with the request's other reads.
 * An older message resolves to null; page to it with `Number.messages` instead.
 */
export const MESSAGE_NODE_SCAN = MAX_PAGE_SIZE;

/** Every message of those windows by id, and the first failed read (if any). */
interface MessageIndex {
  readonly byId: ReadonlyMap<string, MessageRecord>;
  readonly failure: { readonly reason: unknown } | null;
}

/**
 * One index per request (keyed by the request's loaders), built once however many ids are looked
 * up: a lookup is then a map read, not a scan of every number's messages per id.
 */
const indexes = new WeakMap<RequestLoaders, Promise<MessageIndex>>();

export async function findRecentMessage(
  id: string,
  context: GatewayContext,
): Promise<Message | null> {
  const index = await messageIndex(context);
  const found = index.byId.get(id);
  if (found) {
    // Found but unreadable: its own error, as in the history it came from.
    if (isUnreadable(found)) throw found.error;
    return found;
  }
  // Not found: say so only when every number could be read.
  if (index.failure) throw index.failure.reason;
  return null;
}

function messageIndex(context: GatewayContext): Promise<MessageIndex> {
  const upstream = context.upstream();
  let index = indexes.get(upstream);
  if (!index) {
    index = buildIndex(upstream, Math.min(MESSAGE_NODE_SCAN, context.limits.maxHistoryRange));
    indexes.set(upstream, index);
  }
  return index;
}

async function buildIndex(upstream: RequestLoaders, end: number): Promise<MessageIndex> {
  const numbers = await upstream.ownedNumbers();
  const reads = await Promise.allSettled(
    numbers.map((n) => upstream.history({ tid: n.tid, number: n.number, start: 0, end })),
  );
  const byId = new Map<string, MessageRecord>();
  let failure: { reason: unknown } | null = null;
  for (const read of reads) {
    if (read.status === 'rejected') {
      failure ??= { reason: read.reason };
      continue;
    }
    for (const record of read.value.messages) {
      // The first occurrence wins, as the scan in number order did.
      if (record.id !== null && !byId.has(record.id)) byId.set(record.id, record);
    }
  }
  return { byId, failure };
}
