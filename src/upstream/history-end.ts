/**
 * The one place where the gateway's history ranges meet the service's reading of `history_end`.
 *
 * Inside the gateway every range is half-open, [start, end), position 0 being the newest message:
 * `history(start, end)`, Relay paging, range coalescing and live gap filling all compute that way.
 * Here a range becomes the service's `history_start` / `history_end` (UPSTREAM_HISTORY_END says
 * which reading the service has; `npm run doctor` finds out), and its answer is cut back to the
 * range, so every caller gets exactly positions [start, end) from either kind of service.
 */
import type { HistoryEndReading } from '../config/config.js';
import type { History, Range } from '../core/domain.js';

export type { HistoryEndReading };

export interface WireBounds {
  readonly historyStart: number;
  readonly historyEnd: number;
}

/**
 * `range` in the service's terms. An inclusive service cannot be asked for nothing (`end` below
 * `start` is a reversed range), so an empty range asks for the one message at `start` and
 * fitToRange drops it: the answer's counts are still served.
 */
export function wireBounds(range: Range, reading: HistoryEndReading): WireBounds {
  if (reading === 'exclusive') return { historyStart: range.start, historyEnd: range.end };
  return { historyStart: range.start, historyEnd: Math.max(range.start, range.end - 1) };
}

/**
 * The answer cut to positions [start, end): at most `end - start` messages. A service that reads
 * the end inclusively while the gateway is told `exclusive` sends one message too many, at the
 * end; cutting it keeps paging free of duplicates even before UPSTREAM_HISTORY_END is set.
 * `requestedCount` says what the gateway asked for when it had to widen an empty range.
 */
export function fitToRange(history: History, range: Range): History {
  const count = range.end - range.start;
  if (history.messages.length <= count && count > 0) return history;
  return {
    ...history,
    requestedCount: count === 0 ? 0 : history.requestedCount,
    messages: history.messages.slice(0, count),
  };
}
