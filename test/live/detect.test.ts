/**
 * What a poll finds new, against a model history that only grows at its head: the arrivals and
 * nothing else, oldest first; a wider read asked for when more arrived than a page holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../src/core/domain.js';
import { detectNew, SEEN_IDS_KEPT, seenFrom } from '../../src/live/detect.js';

const record = (id: string) => ({ id }) as unknown as MessageRecord;
/** The newest `size` messages of a history of `total`, newest first (ids m<position from oldest>). */
const page = (total: number, size: number) =>
  Array.from({ length: Math.min(size, total) }, (_, i) => record(`m${total - 1 - i}`));
const ids = (records: readonly MessageRecord[]) => records.map((r) => r.id);

describe('detectNew', () => {
  it('finds exactly the messages that arrived since the last poll, oldest first', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        (before, size, arrived) => {
          fc.pre(arrived < size);
          const seen = seenFrom(before, page(before, size));
          const after = before + arrived;
          const found = detectNew(seen, after, page(after, size), false);
          expect(found.kind).toBe('found');
          if (found.kind !== 'found') return;
          const expected = Array.from({ length: arrived }, (_, i) => `m${before + i}`);
          expect(ids(found.added)).toEqual(expected);
          expect(found.next.total).toBe(after);
          expect(found.next.newestIds[0]).toBe(`m${after - 1}`);
        },
      ),
    );
  });

  it('asks for a wider read when more arrived than the page holds', () => {
    const seen = seenFrom(100, page(100, 20));
    expect(detectNew(seen, 150, page(150, 20), false)).toEqual({ kind: 'read-more', count: 50 });
  });

  it('takes at most the growth as new when even the widest read finds nothing known', () => {
    const seen = seenFrom(100, page(100, 20));
    const found = detectNew(seen, 130, page(130, 20), true);
    expect(found.kind === 'found' && ids(found.added)).toEqual(
      Array.from({ length: 20 }, (_, i) => `m${110 + i}`),
    );
  });

  it('sends nothing old again after a history was rewritten without growing', () => {
    const seen = seenFrom(50, page(50, 10));
    const rewritten = Array.from({ length: 10 }, (_, i) => record(`other${i}`));
    const found = detectNew(seen, 50, rewritten, true);
    expect(found.kind === 'found' && found.added).toEqual([]);
  });

  it('remembers a page of ids at most, and none of a record unreadable even for its id', () => {
    const long = page(500, 500);
    expect(seenFrom(500, long).newestIds).toHaveLength(SEEN_IDS_KEPT);
    const withUnreadable = [record('a'), { id: null } as unknown as MessageRecord, record('b')];
    expect(seenFrom(3, withUnreadable).newestIds).toEqual(['a', 'b']);
  });
});
