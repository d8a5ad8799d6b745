/**
 * Which messages of a freshly polled newest page are new (the service has no "since"): those
 * above the newest one the last poll saw. If the page holds none seen, the caller reads the growth
 * in total and asks again; if even that holds none, the newest `growth` are new, never more.
 */
import type { MessageRecord } from '../core/domain.js';

/** total_message_count at the last poll, and the ids of the newest messages seen, newest first. */
export interface SeenState {
  readonly total: number;
  readonly newestIds: readonly string[];
}

export type Detection =
  /** `added` oldest first; `next` is what to remember. */
  | { readonly kind: 'found'; readonly added: readonly MessageRecord[]; readonly next: SeenState }
  /** No seen message on this page, yet the history grew: read `count` newest messages instead. */
  | { readonly kind: 'read-more'; readonly count: number };

/** Ids kept to recognise what was seen: a page's worth is enough. */
export const SEEN_IDS_KEPT = 50;

export function seenFrom(total: number, newestFirst: readonly MessageRecord[]): SeenState {
  // A record unreadable even for its id cannot be recognised again: it is simply not remembered.
  const ids = newestFirst.slice(0, SEEN_IDS_KEPT).map((m) => m.id);
  return { total, newestIds: ids.filter((id) => id !== null) };
}

/** `page` newest first; `final`: the page is already the widest read the caller will make. */
export function detectNew(
  previous: SeenState,
  total: number,
  page: readonly MessageRecord[],
  final: boolean,
): Detection {
  const seen = new Set(previous.newestIds);
  const firstSeen = page.findIndex((m) => m.id !== null && seen.has(m.id));
  const growth = Math.max(0, total - previous.total);
  if (firstSeen < 0 && previous.newestIds.length > 0 && growth > page.length && !final)
    return { kind: 'read-more', count: growth };
  // Everything above the first seen message; with none on the page, the newest `growth`.
  const added = page.slice(0, firstSeen >= 0 ? firstSeen : growth).reverse();
  return { kind: 'found', added, next: seenFrom(total, page) };
}
