/**
 * The response cache's view of a store: fresh answers are hits, older ones only stale copies
 * within the stale-if-error window, one stored copy serving both. A map stands in for the store
 * (the stores have their own tests); the clock is the test's.
 */
import { describe, expect, it } from 'vitest';
import { createAnswerCache } from '../../src/cache/answers.js';
import type { AnswerStore, StoredAnswer } from '../../src/cache/store.js';

function mapStore() {
  const kept = new Map<string, { answer: StoredAnswer; keepMs: number }>();
  const store: AnswerStore = {
    get: (key) => Promise.resolve(kept.get(key)?.answer),
    set: (key, answer, keepMs) => {
      kept.set(key, { answer, keepMs });
      return Promise.resolve();
    },
  };
  return { store, kept };
}

const result = { data: { ownedNumbers: [{ tid: 'T1' }] } };

describe('createAnswerCache', () => {
  it('serves an answer while fresh, then only as a stale copy within the window, with its age', async () => {
    let clock = 1_000;
    const { store, kept } = mapStore();
    const answers = createAnswerCache(store, {
      staleIfErrorMs: 60_000,
      maxEntryBytes: 1_000,
      now: () => clock,
    });
    await answers.set('k', JSON.stringify(result), 5_000);
    // Kept for its TTL and the window: one copy serves both.
    expect(kept.get('k')?.keepMs).toBe(65_000);
    expect(await answers.fresh('k')).toEqual(result);
    clock += 5_000;
    expect(await answers.fresh('k')).toBeUndefined();
    expect(await answers.stale('k')).toEqual({ result, ageMs: 5_000 });
    clock += 60_000;
    expect(await answers.stale('k')).toEqual({ result, ageMs: 65_000 });
    clock += 1;
    expect(await answers.stale('k')).toBeUndefined();
  });

  it('serves no stale copy when the window is off', async () => {
    let clock = 0;
    const answers = createAnswerCache(mapStore().store, {
      staleIfErrorMs: 0,
      maxEntryBytes: 1_000,
      now: () => clock,
    });
    await answers.set('k', JSON.stringify(result), 100);
    clock = 100;
    expect(await answers.stale('k')).toBeUndefined();
  });

  it('refuses an answer larger than an entry may be', async () => {
    const { store, kept } = mapStore();
    const answers = createAnswerCache(store, { staleIfErrorMs: 0, maxEntryBytes: 20 });
    await answers.set('k', JSON.stringify(result), 1_000);
    expect(kept.size).toBe(0);
  });

  it('hands each hit its own copy, so no caller can change what the next one reads', async () => {
    const answers = createAnswerCache(mapStore().store, {
      staleIfErrorMs: 0,
      maxEntryBytes: 1_000,
    });
    await answers.set('k', JSON.stringify(result), 60_000);
    const first = (await answers.fresh('k')) as typeof result;
    first.data.ownedNumbers[0]!.tid = 'changed';
    expect(await answers.fresh('k')).toEqual(result);
  });
});
