/**
 * Number.messages paging over the service's history ranges, newest first (docs/paging.md).
 * Arguments and cursors are checked before any upstream call; a page is one window, or two when
 * the history moved since the cursor was issued.
 */
import type { History, Range } from '../core/domain.js';
import { badUserInput, resyncRequired } from '../core/errors.js';
import type { GatewayLimits } from '../config/config.js';
import type { CursorCodec, CursorOwner, MessageCursor } from './cursors.js';

/** Most edges one page may ask for (`first` or `last`); also capped by MAX_HISTORY_RANGE. */
export const MAX_PAGE_SIZE = 100;
/** Most edges one page may ask for under these limits: past it, BAD_USER_INPUT (planPage). */
export function maxPageSize(limits: Pick<GatewayLimits, 'maxHistoryRange'>): number {
  return Math.min(MAX_PAGE_SIZE, limits.maxHistoryRange);
}

/** Page size when neither `first` nor `last` is given. */
export const DEFAULT_PAGE_SIZE = 20;

interface PageArgs {
  readonly first?: number | null | undefined;
  readonly after?: string | null | undefined;
  readonly last?: number | null | undefined;
  readonly before?: string | null | undefined;
}

/** What to read: from the head, after or before a cursor's message, or the oldest messages. */
export type PagePlan =
  | { readonly kind: 'head'; readonly size: number }
  | { readonly kind: 'after'; readonly size: number; readonly cursor: MessageCursor }
  | { readonly kind: 'before'; readonly size: number; readonly cursor: MessageCursor }
  | { readonly kind: 'tail'; readonly size: number };

/** Reads one window of the number's history (positions [start, end), 0 = newest). */
type ReadWindow = (range: Range) => Promise<History>;

/** Arguments that do not go together, in the order checked: the refusal names the second. */
const CONFLICTS: readonly [keyof PageArgs, keyof PageArgs, string][] = [
  ['first', 'last', 'pass either `first` (with `after`) or `last` (with `before`), not both'],
  ['after', 'before', 'pass either `after` or `before`, not both'],
  ['last', 'after', '`after` pages forward and goes with `first`, not `last`'],
  ['first', 'before', '`before` pages backward and goes with `last`, not `first`'],
];

/** Checks the arguments: BAD_USER_INPUT, or RESYNC_REQUIRED for a cursor of a key gone. */
export function planPage(
  args: PageArgs,
  tid: string,
  codec: CursorCodec,
  maxSize: number,
): PagePlan {
  const { first, after, last, before } = args;
  const has = (v: unknown) => v !== null && v !== undefined;
  for (const [one, other, why] of CONFLICTS)
    if (has(args[one]) && has(args[other])) throw badUserInput(`messages: ${why}`, other);
  const size = (name: 'first' | 'last', value: number | null | undefined): number => {
    if (value === null || value === undefined) return Math.min(DEFAULT_PAGE_SIZE, maxSize);
    if (value < 0)
      throw badUserInput(`messages: \`${name}\` must be 0 or more (got ${value})`, name);
    if (value > maxSize)
      throw badUserInput(`messages: \`${name}\` must be at most ${maxSize} (got ${value})`, name);
    return value;
  };
  const cursor = (name: 'after' | 'before', text: string): MessageCursor => {
    const { cursor: decoded, refusal } = codec.decode(text);
    if (refusal === 'unknown-key') {
      throw resyncRequired(
        `messages: \`${name}\` is a cursor signed with a key this gateway no longer has (a restart or a key rotation); read the list again from the first page`,
      );
    }
    if (decoded === null) {
      throw badUserInput(
        `messages: \`${name}\` is not a cursor this gateway issued; pass back an edge's cursor or pageInfo's startCursor/endCursor unchanged`,
        name,
      );
    }
    if (decoded.tid !== tid) {
      throw badUserInput(`messages: \`${name}\` is a cursor into another number's messages`, name);
    }
    return decoded;
  };
  if (has(last) || has(before)) {
    const n = size('last', last);
    return has(before)
      ? { kind: 'before', size: n, cursor: cursor('before', before as string) }
      : { kind: 'tail', size: n };
  }
  const n = size('first', first);
  return has(after)
    ? { kind: 'after', size: n, cursor: cursor('after', after as string) }
    : { kind: 'head', size: n };
}

/** The window read around a cursor's message at position `anchor`: the message itself and the page. */
function windowAround(plan: PagePlan & { readonly cursor: MessageCursor }, anchor: number): Range {
  const n = plan.size;
  // The cursor's message is read too, to verify it is where we think.
  return plan.kind === 'after'
    ? { start: anchor, end: anchor + 1 + n }
    : { start: Math.max(0, anchor - n), end: anchor + 1 };
}

/**
 * The first window a page after or before a cursor reads (null for the other pages): reading it
 * first costs nothing more, as the page's own read of it is then served from the request's loader.
 */
export function firstWindow(plan: PagePlan): Range | null {
  return plan.kind === 'after' || plan.kind === 'before'
    ? windowAround(plan, plan.cursor.offset)
    : null;
}

/**
 * Reads the planned page: one window, or two when the history moved or is longer than a page.
 * `owner`: written into the page's cursors, so that the next page needs no lookup of the number.
 */
export async function loadPage(
  plan: PagePlan,
  read: ReadWindow,
  tid: string,
  codec: CursorCodec,
  owner?: CursorOwner,
) {
  const n = plan.size;
  /** Edges for positions [start, start + size) out of a window read at `range`. */
  const page = (history: History, range: Range, start: number, size = n) => {
    const from = Math.max(0, start - range.start);
    const nodes = history.messages.slice(from, from + size);
    const total = history.totalCount;
    const edges = nodes.map((node, i) => ({
      // An unreadable record without an id still gets a cursor: its position alone locates it.
      cursor: codec.encode({ tid, id: node.id ?? '', offset: start + i, total, owner }),
      node,
    }));
    return {
      totalCount: total,
      edges,
      pageInfo: {
        hasPreviousPage: start > 0,
        hasNextPage: start + nodes.length < total,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    };
  };
  switch (plan.kind) {
    case 'head': {
      const range = { start: 0, end: n };
      return page(await read(range), range, 0);
    }
    case 'tail': {
      // The oldest messages: their positions are only known once the total is.
      const probe = { start: 0, end: n };
      const first = await read(probe);
      if (first.totalCount <= n) return page(first, probe, 0);
      const range = { start: first.totalCount - n, end: first.totalCount };
      return page(await read(range), range, range.start);
    }
    case 'after':
    case 'before': {
      const windowAt = (anchor: number) => windowAround(plan, anchor);
      const { anchor, history, range } = await locate(plan.cursor, windowAt, read);
      if (plan.kind === 'after') return page(history, range, anchor + 1);
      const start = Math.max(0, anchor - n);
      return page(history, range, start, anchor - start);
    }
  }
}

/** Each read follows the message to where the last saw it; it misses only if messages arrived. */
const MAX_LOCATE_READS = 3;

/**
 * Finds the cursor's message (`anchor`, its position now): at its old position, else where the
 * last window saw it, else shifted by the growth in total count (also the estimate if it is gone).
 */
async function locate(
  cursor: MessageCursor,
  windowAt: (anchor: number) => Range,
  read: ReadWindow,
): Promise<{ anchor: number; history: History; range: Range }> {
  let anchor = cursor.offset;
  let range = windowAt(anchor);
  let history = await read(range);
  for (let reads = 1; history.messages[anchor - range.start]?.id !== cursor.id; reads += 1) {
    const index = history.messages.findIndex((m) => m.id === cursor.id);
    const seenAt = index < 0 ? null : range.start + index;
    // Seen in this window but not where a full page needs it: close enough after the last read.
    if (reads === MAX_LOCATE_READS) return { anchor: seenAt ?? anchor, history, range };
    const next = seenAt ?? Math.max(0, cursor.offset + history.totalCount - cursor.total);
    // Not seen, and the estimate did not move: another read would return the same window.
    if (seenAt === null && next === anchor) break;
    anchor = next;
    range = windowAt(anchor);
    history = await read(range);
  }
  return { anchor, history, range };
}
