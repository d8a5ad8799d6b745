/** Range coalescing (src/upstream/ranges.ts): fewest calls, each range served whole by one. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Range } from '../../src/core/domain.js';
import { coalesceRanges, sliceFor } from '../../src/upstream/ranges.js';

const range = fc
  .tuple(fc.nat({ max: 200 }), fc.nat({ max: 60 }))
  .map(([start, width]): Range => ({ start, end: start + width }));

const inside = (r: Range, call: Range) => call.start <= r.start && r.end <= call.end;

describe('coalesceRanges', () => {
  it('serves 0..10, 5..20 and 0..15 with one call for 0..20', () => {
    const calls = coalesceRanges([
      { start: 0, end: 10 },
      { start: 5, end: 20 },
      { start: 0, end: 15 },
    ]);
    expect(calls).toEqual([{ range: { start: 0, end: 20 }, members: [0, 2, 1] }]);
  });

  it('merges touching ranges and keeps separate ones apart', () => {
    const calls = coalesceRanges([
      { start: 10, end: 20 },
      { start: 0, end: 10 },
      { start: 30, end: 31 },
    ]);
    expect(calls.map((c) => c.range)).toEqual([
      { start: 0, end: 20 },
      { start: 30, end: 31 },
    ]);
  });

  it('covers every range whole, and no two calls overlap or touch', () => {
    fc.assert(
      fc.property(fc.array(range, { minLength: 1, maxLength: 12 }), (ranges) => {
        const calls = coalesceRanges(ranges);
        const served = calls.flatMap((c) => c.members).sort((a, b) => a - b);
        expect(served).toEqual(ranges.map((_, i) => i));
        for (const call of calls) {
          for (const m of call.members) expect(inside(ranges[m] as Range, call.range)).toBe(true);
        }
        for (let i = 1; i < calls.length; i += 1) {
          // Sorted, with a gap of at least one position between neighbours.
          expect((calls[i - 1] as (typeof calls)[number]).range.end).toBeLessThan(
            (calls[i] as (typeof calls)[number]).range.start,
          );
        }
        // Fewest calls: the union of the ranges has exactly this many separate pieces.
        // (Points doubled, so touching ranges share one and an empty range is still a point.)
        const covered = new Set<number>();
        for (const r of ranges) for (let p = 2 * r.start; p <= 2 * r.end; p += 1) covered.add(p);
        const pieces = [...covered].filter((p) => !covered.has(p - 1)).length;
        expect(calls).toHaveLength(pieces);
      }),
    );
  });

  it('keeps each call within the span cap unless one range alone is wider', () => {
    fc.assert(
      fc.property(
        fc.array(range, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 80 }),
        (ranges, cap) => {
          const calls = coalesceRanges(ranges, cap);
          const served = calls.flatMap((c) => c.members).sort((a, b) => a - b);
          expect(served).toEqual(ranges.map((_, i) => i));
          for (const call of calls) {
            const members = call.members.map((m) => ranges[m] as Range);
            for (const r of members) expect(inside(r, call.range)).toBe(true);
            const widest = Math.max(...members.map((r) => r.end - r.start));
            expect(call.range.end - call.range.start).toBeLessThanOrEqual(Math.max(cap, widest));
          }
        },
      ),
    );
  });
});

describe('sliceFor', () => {
  it("gives a range exactly its part of a wider call's answer", () => {
    const items = Array.from({ length: 20 }, (_, i) => i);
    expect(sliceFor(items, { start: 0, end: 20 }, { start: 5, end: 8 })).toEqual([5, 6, 7]);
    // A short answer (the history ends early) gives a short slice, never another range's items.
    expect(sliceFor(items.slice(0, 6), { start: 0, end: 20 }, { start: 5, end: 8 })).toEqual([5]);
  });
});
