/** The per-request cap on upstream calls in flight (src/traffic/per-request-cap.ts). */
import { describe, expect, it } from 'vitest';
import { createLimit } from '../../src/traffic/per-request-cap.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createLimit', () => {
  it('never runs more than the cap at once, and starts waiting tasks in order', async () => {
    const limit = createLimit(3);
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        limit(async () => {
          started.push(i);
          active++;
          peak = Math.max(peak, active);
          await tick(5 + (i % 3));
          active--;
          return i * 2;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results).toEqual(Array.from({ length: 10 }, (_, i) => i * 2));
  });

  it('passes failures to their caller and frees the slot', async () => {
    const limit = createLimit(1);
    const failing = limit(() => Promise.reject(new Error('boom')));
    const throwing = limit(() => {
      throw new Error('sync boom');
    });
    const after = limit(() => Promise.resolve('ran'));
    await expect(failing).rejects.toThrow('boom');
    await expect(throwing).rejects.toThrow('sync boom');
    await expect(after).resolves.toBe('ran');
  });

  it('refuses a cap below one', () => {
    expect(() => createLimit(0)).toThrow(RangeError);
  });
});
