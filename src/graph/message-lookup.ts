/** Finding messages by id, for `node(id)`, `nodes(ids:)` and federation references. */
import type { GatewayContext } from './context.js';
import { isUnreadable, type Message, type MessageRecord } from '../core/domain.js';
import type { RequestLoaders } from '../upstream/loaders.js';
import { MAX_PAGE_SIZE } from './paging.js';

/** Messages are found through histories only: an id is looked for in each number's newest. */
export const MESSAGE_NODE_SCAN = MAX_PAGE_SIZE;

/** One index per request (by its loaders), built once however many ids are looked up. */
const indexes = new WeakMap<RequestLoaders, ReturnType<typeof buildIndex>>();

export async function findRecentMessage(
  id: string,
  context: GatewayContext,
): Promise<Message | null> {
  const upstream = context.upstream();
  let pending = indexes.get(upstream);
  if (!pending) {
    pending = buildIndex(upstream, Math.min(MESSAGE_NODE_SCAN, context.limits.maxHistoryRange));
    indexes.set(upstream, pending);
  }
  const index = await pending;
  const found = index.byId.get(id);
  if (found) {
    if (isUnreadable(found)) throw found.error;
    return found;
  }
  // Not found: say so only when every number could be read.
  if (index.failure) throw index.failure.reason;
  return null;
}

/** Every message of those windows by id, and the first failed read (if any). */
async function buildIndex(upstream: RequestLoaders, end: number) {
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
      if (record.id !== null && !byId.has(record.id)) byId.set(record.id, record);
    }
  }
  return { byId, failure };
}
