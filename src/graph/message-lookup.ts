/** Finding one message by its id, for `node(id)` and federation references. */
import type { GatewayContext } from './context.js';
import { isUnreadable, type Message } from '../core/domain.js';
import { MAX_PAGE_SIZE } from './paging.js';

/**
 * The service finds messages only through a number's history, so a message id is looked for
 * among the newest MESSAGE_NODE_SCAN messages of each of the account's numbers: one
 * owned-numbers call plus one history call per number, shared with the request's other reads.
 * An older message resolves to null; page to it with `Number.messages` instead.
 */
export const MESSAGE_NODE_SCAN = MAX_PAGE_SIZE;

export async function findRecentMessage(
  id: string,
  context: GatewayContext,
): Promise<Message | null> {
  const upstream = context.upstream();
  const numbers = await upstream.ownedNumbers();
  const end = Math.min(MESSAGE_NODE_SCAN, context.limits.maxHistoryRange);
  const reads = await Promise.allSettled(
    numbers.map((n) => upstream.history({ tid: n.tid, number: n.number, start: 0, end })),
  );
  for (const read of reads) {
    const found = read.status === 'fulfilled' && read.value.messages.find((m) => m.id === id);
    if (!found) continue;
    // Found but unreadable: its own error, as in the history it came from.
    if (isUnreadable(found)) throw found.error;
    return found;
  }
  // Not found: say so only when every number could be read.
  const failed = reads.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return null;
}
