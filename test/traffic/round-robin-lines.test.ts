import { describe, expect, it } from 'vitest';
import { RoundRobinLines } from '../../src/traffic/round-robin-lines.js';

describe('RoundRobinLines', () => {
  it('serves one item per key in turn, oldest first within a key', () => {
    const lines = new RoundRobinLines<string>();
    for (const item of ['a1', 'a2', 'a3']) lines.push('a', item);
    lines.push('b', 'b1');
    lines.push('c', 'c1');
    const served: string[] = [];
    lines.serve(
      () => true,
      (_key, item) => served.push(item),
    );
    expect(served).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
    expect(lines.waiting).toBe(0);
    expect(lines.keys).toBe(0);
  });

  it('keeps the place of a key that may not go, and stops when no key may', () => {
    const lines = new RoundRobinLines<string>();
    lines.push('busy', 'x1');
    lines.push('free', 'y1');
    lines.push('free', 'y2');
    const held: string[] = [];
    const served: string[] = [];
    lines.serve(
      (key) => key !== 'busy',
      (_key, item) => served.push(item),
      () => true,
      (key) => held.push(key),
    );
    expect(served).toEqual(['y1', 'y2']);
    expect(held.length).toBeGreaterThan(0);
    expect(lines.lengthOf('busy')).toBe(1);
    // Its turn comes first once it may go.
    lines.push('free', 'y3');
    const next: string[] = [];
    lines.serve(
      () => true,
      (_key, item) => next.push(item),
      () => next.length < 1,
    );
    expect(next).toEqual(['x1']);
  });

  it('forgets an item that gave up, and counts what waits', () => {
    const lines = new RoundRobinLines<object>();
    const gone = {};
    lines.push('a', gone);
    lines.push('a', {});
    expect(lines.remove('a', gone)).toBe(true);
    expect(lines.remove('a', gone)).toBe(false);
    expect(lines.waiting).toBe(1);
    expect(lines.has('a')).toBe(true);
  });
});
