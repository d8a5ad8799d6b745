/**
 * Which messages of a freshly polled page are new. The service has no "since" parameter, so a
 * poll reads the newest page (position 0 = newest) and compares it with what the last poll saw:
 * the messages above the newest one already seen are new. Written by hand: it is the service's
 * own paging that makes this necessary.
 *
 * When none of the page's messages was seen before, more arrived than a page holds: the caller
 * reads `total - seen total` messages (up to its cap) and asks again. When even that finds no
 * known message (history rewritten, or more arrived than the cap), the newest `total` growth is
 * taken as new, never more, so old messages are not sent again.
 */
import type { MessageRecord } from '../core/domain.js';

export interface SeenState {
  /** total_message_count at the last poll. */
  readonly total: number;
  /** Ids of the newest messages seen, newest first. */
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

/**
 * `page` newest first, as the service sends it; `total` its total_message_count; `final` true
 * when the page is already the widest read the caller will make.
 */
export function detectNew(
  previous: SeenState,
  total: number,
  page: readonly MessageRecord[],
  final: boolean,
): Detection {
  const seen = new Set(previous.newestIds);
  const firstSeen = page.findIndex((m) => m.id !== null && seen.has(m.id));
  const growth = Math.max(0, total - previous.total);
  let added: readonly MessageRecord[];
  if (firstSeen >= 0 || previous.newestIds.length === 0) {
    // Everything above the first known message (with no memory at all: the growth, at most).
    added = firstSeen >= 0 ? page.slice(0, firstSeen) : page.slice(0, growth);
  } else if (growth > page.length && !final) {
    return { kind: 'read-more', count: growth };
  } else {
    added = page.slice(0, growth);
  }
  return {
    kind: 'found',
    added: [...added].reverse(),
    next: seenFrom(total, page.length > 0 ? page : []),
  };
}
