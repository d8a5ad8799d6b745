/**
 * Range coalescing for history calls (docs/paging.md "Coalescing"). Slicing relies on the client
 * serving exactly [start, end) back (history-end.ts).
 */
import type { Range } from '../core/domain.js';

/**
 * Ranges that overlap or touch share one call unless it would grow wider than `maxSpan`. Every
 * range is served whole by exactly one call (`members`: their indexes), so no slice spans two.
 */
export function coalesceRanges(
  ranges: readonly Range[],
  maxSpan: number = Number.POSITIVE_INFINITY,
): { range: Range; members: number[] }[] {
  const order = ranges
    .map((range, index) => ({ range, index }))
    .sort((a, b) => a.range.start - b.range.start || a.range.end - b.range.end);
  const calls: { range: { start: number; end: number }; members: number[] }[] = [];
  for (const { range, index } of order) {
    const current = calls.at(-1);
    if (current && range.start <= current.range.end) {
      const end = Math.max(current.range.end, range.end);
      if (end - current.range.start <= maxSpan) {
        current.range.end = end;
        current.members.push(index);
        continue;
      }
    }
    calls.push({ range: { start: range.start, end: range.end }, members: [index] });
  }
  return calls;
}

/** The part of a call's answer that belongs to `range` (which must lie inside `call`). */
export function sliceFor<T>(items: readonly T[], call: Range, range: Range): readonly T[] {
  return items.slice(range.start - call.start, range.end - call.start);
}
