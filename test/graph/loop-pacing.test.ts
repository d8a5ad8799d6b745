/**
 * The pacing of one request's lists (src/graph/loop-pacing.ts). Turns of the loop are counted with
 * a setImmediate ticker, as another request's I/O would be served between them; no clock is read.
 */
import { describe, expect, it } from 'vitest';
import { createPacer } from '../../src/graph/loop-pacing.js';

const list = (items: number) => Array.from({ length: items }, (_, i) => ({ i }));

/** Counts the loop's turns until stopped (one setImmediate per turn). */
function turnCounter() {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turns() {
      return turns;
    },
    stop() {
      running = false;
    },
  };
}

describe('the pacer', () => {
  it('runs lists at once while the request is within its slice of the turn', () => {
    const pacer = createPacer({ sliceMs: 60_000, itemsPerTurn: 10 });
    const results = Array.from({ length: 20 }, () => pacer.run(() => list(3)));
    expect(results.every(Array.isArray)).toBe(true);
  });

  it('once the slice is used, lets the loop turn between batches of items, in order', async () => {
    const pacer = createPacer({ sliceMs: 0, itemsPerTurn: 100 });
    const counter = turnCounter();
    const turnOfList: number[] = [];
    const runs = Array.from({ length: 30 }, () =>
      pacer.run(() => {
        turnOfList.push(counter.turns);
        return list(34);
      }),
    );
    // Every list waits for a later turn: none is answered at once.
    expect(runs.filter((run) => run instanceof Promise)).toHaveLength(30);
    const lists = await Promise.all(runs);
    counter.stop();
    expect(lists.map((l) => l.length)).toEqual(Array(30).fill(34));
    // 34 items a list, 100 a turn: three lists a turn, so 10 turns, each seeing the ticker move.
    const turnsUsed = new Set(turnOfList).size;
    expect(turnsUsed).toBeGreaterThanOrEqual(10);
    // Lists keep the order they were asked for in.
    expect(turnOfList).toEqual([...turnOfList].sort((a, b) => a - b));
  });

  it('passes on what a list resolver throws, and still drains the rest', async () => {
    const pacer = createPacer({ sliceMs: 0, itemsPerTurn: 1 });
    const failing = Promise.resolve(
      pacer.run(() => {
        throw new Error('no list');
      }),
    );
    const after = Promise.resolve(pacer.run(() => list(2)));
    await expect(failing).rejects.toThrow('no list');
    await expect(after).resolves.toHaveLength(2);
  });
});
