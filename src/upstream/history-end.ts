/**
 * The one place where the gateway's half-open ranges [start, end) meet the service's reading of
 * `history_end` (UPSTREAM_HISTORY_END; `npm run doctor` finds out).
 */
import type { HistoryEndReading } from '../config/config.js';
import type { History, Range } from '../core/domain.js';

/**
 * `range` in the service's terms. An inclusive service cannot be asked for nothing (`end` below
 * `start` is a reversed range), so an empty range asks for the one message at `start` and
 * fitToRange drops it: the answer's counts are still served.
 */
export function wireBounds(
  range: Range,
  reading: HistoryEndReading,
): { historyStart: number; historyEnd: number } {
  if (reading === 'exclusive') return { historyStart: range.start, historyEnd: range.end };
  return { historyStart: range.start, historyEnd: Math.max(range.start, range.end - 1) };
}

/**
 * The answer cut to at most `end - start` messages: an inclusive service read as `exclusive` sends
 * one too many, and paging must not repeat it. An empty range's `requestedCount` is 0.
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
