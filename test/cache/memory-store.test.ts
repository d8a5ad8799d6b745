/**
 * The in-memory answer store's bounds, without a gateway: the byte budget holds, oversized
 * answers are refused, a heavy account evicts its own entries before a light account's, and the
 * stale-if-error view of the same store honours TTL and window on a controlled clock.
 */
import { describe, expect, it } from 'vitest';
import { createAnswerCache } from '../../src/cache/answers.js';
import { ENTRY_OVERHEAD_BYTES, MemoryAnswerStore } from '../../src/cache/memory-store.js';
import type { StoredAnswer } from '../../src/cache/store.js';

const accountOf = (key: string): string => key.slice(0, key.indexOf(':'));
const key = (account: string, n: number): string => `${account}:${String(n).padStart(4, '0')}`;

function answer(bytes: number, storedAt = 0): StoredAnswer {
  const json = `"${'x'.repeat(Math.max(0, bytes - 2))}"`;
  return { json, bytes: json.length, storedAt, freshMs: 60_000 };
}

/** What one entry of `bytes` JSON costs the budget (see memory-store.ts). */
const cost = (account: string, bytes: number): number =>
  bytes + key(account, 0).length + ENTRY_OVERHEAD_BYTES;

async function present(store: MemoryAnswerStore, keys: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const k of keys) if (await store.get(k)) found.push(k);
  return found;
}

describe('MemoryAnswerStore', () => {
  it('never holds more than maxBytes, evicting the least recently used', async () => {
    const maxBytes = 100_000;
    const store = new MemoryAnswerStore({ maxBytes, accountOf });
    for (let n = 0; n < 500; n += 1) {
      await store.set(key('a', n), answer(1_000 + (n % 7) * 500), 60_000);
      expect(store.usage().total).toBeLessThanOrEqual(maxBytes);
    }
    expect(store.usage().total).toBeGreaterThan(maxBytes * 0.9);
    expect(await store.get(key('a', 499))).toBeDefined();
    expect(await store.get(key('a', 0))).toBeUndefined();

    // Reading an entry makes it recent: it outlives entries written after it.
    const keys = Array.from({ length: 500 }, (_, n) => key('a', n));
    const kept = await present(store, keys);
    const oldest = kept[0] ?? '';
    expect(await store.get(oldest)).toBeDefined();
    await store.set(key('a', 500), answer(2_000), 60_000);
    await store.set(key('a', 501), answer(2_000), 60_000);
    expect(await store.get(oldest)).toBeDefined();
    expect(await store.get(kept[1] ?? '')).toBeUndefined();
  });

  it('refuses an answer larger than the whole budget without evicting anything', async () => {
    const store = new MemoryAnswerStore({ maxBytes: 10_000, accountOf });
    await store.set(key('a', 1), answer(1_000), 60_000);
    await store.set(key('a', 2), answer(20_000), 60_000);
    expect(await store.get(key('a', 2))).toBeUndefined();
    expect(await store.get(key('a', 1))).toBeDefined();
    expect(store.usage().total).toBe(cost('a', 1_000));
  });

  it('lets a heavy account evict only its own entries while a light one holds less', async () => {
    const maxBytes = 200_000;
    const store = new MemoryAnswerStore({ maxBytes, accountOf });
    const light = Array.from({ length: 10 }, (_, n) => key('light', n));
    for (const k of light) await store.set(k, answer(5_000), 60_000);
    const lightBytes = store.usage().accounts.get('light') ?? 0;
    expect(lightBytes).toBe(10 * cost('light', 5_000));

    // The heavy account writes ten times the budget in distinct answers.
    for (let n = 0; n < 400; n += 1) await store.set(key('heavy', n), answer(5_000), 60_000);
    expect(await present(store, light)).toEqual(light);
    const { total, accounts } = store.usage();
    expect(total).toBeLessThanOrEqual(maxBytes);
    expect(accounts.get('light')).toBe(lightBytes);
    expect(accounts.get('heavy')).toBeLessThanOrEqual(maxBytes - lightBytes);
    expect(await store.get(key('heavy', 399))).toBeDefined();
  });

  it('takes room from the largest holder: a newcomer gets up to an equal share', async () => {
    const maxBytes = 100_000;
    const store = new MemoryAnswerStore({ maxBytes, accountOf });
    // One account alone may use the whole budget: nobody else needs the room.
    for (let n = 0; n < 100; n += 1) await store.set(key('first', n), answer(2_000), 60_000);
    const alone = store.usage().accounts.get('first') ?? 0;
    expect(alone).toBeGreaterThan(maxBytes * 0.9);

    const second = Array.from({ length: 20 }, (_, n) => key('second', n));
    for (const k of second) await store.set(k, answer(2_000), 60_000);
    // 20 entries are well under half the budget: all kept, paid for by the first account.
    expect(await present(store, second)).toEqual(second);
    const { total, accounts } = store.usage();
    expect(total).toBeLessThanOrEqual(maxBytes);
    expect(accounts.get('first')).toBeLessThan(alone);

    // Past an equal share the newcomer is the largest holder and evicts its own.
    for (let n = 20; n < 100; n += 1) await store.set(key('second', n), answer(2_000), 60_000);
    const shares = store.usage().accounts;
    const [a, b] = [shares.get('first') ?? 0, shares.get('second') ?? 0];
    expect(Math.abs(a - b)).toBeLessThanOrEqual(cost('second', 2_000));
  });
});

describe('answer cache over the memory store', () => {
  it('serves an answer fresh for its TTL, then only as stale for the window, with its age', async () => {
    let clock = 1_000_000;
    const now = (): number => clock;
    const store = new MemoryAnswerStore({ maxBytes: 100_000, accountOf, now });
    const answers = createAnswerCache(store, { staleIfErrorMs: 5_000, maxEntryBytes: 10_000, now });
    const result = { data: { ownedNumbers: [{ tid: 'TN-1' }] } };
    await answers.set('a:1', JSON.stringify(result), 1_000);

    clock += 999;
    expect(await answers.fresh('a:1')).toEqual(result);
    clock += 1;
    expect(await answers.fresh('a:1')).toBeUndefined();
    expect(await answers.stale('a:1')).toEqual({ result, ageMs: 1_000 });
    clock += 5_000;
    expect(await answers.stale('a:1')).toEqual({ result, ageMs: 6_000 });
    clock += 1;
    expect(await answers.stale('a:1')).toBeUndefined();
  });

  it('stores nothing over maxEntryBytes, and keeps no stale copy without a window', async () => {
    const store = new MemoryAnswerStore({ maxBytes: 100_000, accountOf });
    const answers = createAnswerCache(store, { staleIfErrorMs: 0, maxEntryBytes: 1_000 });
    const big = { data: { body: 'x'.repeat(1_000) } };
    await answers.set('a:big', JSON.stringify(big), 60_000);
    expect(await store.get('a:big')).toBeUndefined();

    await answers.set('a:small', JSON.stringify({ data: { ok: true } }), 60_000);
    expect(await answers.fresh('a:small')).toEqual({ data: { ok: true } });
    expect(await answers.stale('a:small')).toBeUndefined();
  });
});
