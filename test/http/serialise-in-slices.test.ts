/**
 * The sliced serialiser writes what JSON.stringify writes, for any value an execution result can
 * hold (and the odd ones it skips), and lets other work run between its slices.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serialiseInSlices } from '../../src/http/serialise-in-slices.js';

const text = async (value: unknown, sliceMs?: number): Promise<string> =>
  Buffer.concat(await serialiseInSlices(value, sliceMs)).toString('utf8');

/** JSON values, deep and wide, with what JSON.stringify drops or converts among them. */
const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(undefined, () => 1, Symbol('s'), new Date(0), { toJSON: () => 'mine' }),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 6 }),
  ),
})).value;

describe('serialiseInSlices', () => {
  it('writes exactly what JSON.stringify writes, sliced or not', async () => {
    await fc.assert(
      fc.asyncProperty(values, fc.constantFrom(0, 2), async (value, sliceMs) => {
        expect(await text({ data: value }, sliceMs)).toBe(JSON.stringify({ data: value }));
      }),
      { numRuns: 300 },
    );
  });

  it('lets other work run between its slices, and none with a slice longer than the work', async () => {
    const history = Array.from({ length: 200 }, (_, n) => ({
      tid: `TN-${n}`,
      messages: Array.from({ length: 40 }, (_, m) => ({ id: `${n}-${m}`, body: 'x'.repeat(40) })),
    }));
    const answer = { data: { ownedNumbers: history } };
    const runsBetween = async (sliceMs: number): Promise<number> => {
      let runs = 0;
      let going = true;
      const tick = (): void => {
        runs += 1;
        if (going) setImmediate(tick);
      };
      setImmediate(tick);
      const written = await text(answer, sliceMs);
      going = false;
      expect(written).toBe(JSON.stringify(answer));
      return runs;
    };
    expect(await runsBetween(0)).toBeGreaterThan(100);
    expect(await runsBetween(60_000)).toBe(0);
  });
});
