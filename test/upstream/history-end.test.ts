/**
 * src/upstream/history-end.ts: any half-open range, sent in a service's reading of history_end
 * and cut back, is exactly positions [start, end) of the history, for both readings; and the
 * default reading in front of an inclusive service still never serves a message too many.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { History } from '../../src/core/domain.js';
import type { HistoryEndReading } from '../../src/config/config.js';
import { fitToRange, wireBounds } from '../../src/upstream/history-end.js';

/** A service holding `total` messages (ids "m0".. newest first) that reads the end as `reading`. */
function serve(total: number, reading: HistoryEndReading, start: number, end: number): History {
  const stop = Math.min(total, reading === 'inclusive' ? end + 1 : end);
  const ids = Array.from({ length: Math.max(0, stop - start) }, (_, i) => `m${start + i}`);
  return {
    tid: 'T',
    number: '1',
    requestedCount: reading === 'inclusive' ? end - start + 1 : end - start,
    totalCount: total,
    createdAt: null,
    mostRecentMessageId: null,
    mostRecentAt: null,
    optIn: null,
    messages: ids.map((id) => ({ unreadable: true as const, id, error: new Error('unused') })),
  };
}

const ids = (h: History) => h.messages.map((m) => m.id);
const expected = (total: number, start: number, end: number) =>
  Array.from({ length: Math.max(0, Math.min(end, total) - start) }, (_, i) => `m${start + i}`);

const cases = fc.record({
  total: fc.nat({ max: 60 }),
  start: fc.nat({ max: 70 }),
  width: fc.nat({ max: 30 }),
  reading: fc.constantFrom<HistoryEndReading>('exclusive', 'inclusive'),
});

describe('wireBounds and fitToRange', () => {
  it('serve exactly [start, end) from a service of either reading, told its reading', () => {
    fc.assert(
      fc.property(cases, ({ total, start, width, reading }) => {
        const range = { start, end: start + width };
        const bounds = wireBounds(range, reading);
        // Never a reversed range, never a negative bound.
        expect(bounds.historyEnd).toBeGreaterThanOrEqual(bounds.historyStart);
        const answer = fitToRange(
          serve(total, reading, bounds.historyStart, bounds.historyEnd),
          range,
        );
        expect(ids(answer)).toEqual(expected(total, range.start, range.end));
        if (width === 0) expect(answer.requestedCount).toBe(0);
        else expect(answer.requestedCount).toBe(width);
      }),
    );
  });

  it('send history_end = end, or end - 1 to an inclusive service', () => {
    expect(wireBounds({ start: 0, end: 5 }, 'exclusive')).toEqual({
      historyStart: 0,
      historyEnd: 5,
    });
    expect(wireBounds({ start: 0, end: 5 }, 'inclusive')).toEqual({
      historyStart: 0,
      historyEnd: 4,
    });
    // An empty range asks an inclusive service for the one message at start, then drops it.
    expect(wireBounds({ start: 3, end: 3 }, 'inclusive')).toEqual({
      historyStart: 3,
      historyEnd: 3,
    });
  });

  it('cut the extra message an inclusive service sends a gateway left at exclusive', () => {
    fc.assert(
      fc.property(cases, ({ total, start, width }) => {
        const range = { start, end: start + width };
        const bounds = wireBounds(range, 'exclusive');
        const answer = fitToRange(
          serve(total, 'inclusive', bounds.historyStart, bounds.historyEnd),
          range,
        );
        expect(ids(answer)).toEqual(expected(total, range.start, range.end));
      }),
    );
  });
});
