/**
 * The fair scheduler (src/traffic/fair-scheduler.ts): which account a freed call slot goes to, and
 * a waiting call dropped when its deadline passes.
 */
import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from '../../src/traffic/adaptive-limit.js';
import type { Release } from '../../src/traffic/fair-admission.js';
import { FairScheduler } from '../../src/traffic/fair-scheduler.js';

describe('FairScheduler', () => {
  const never = new AbortController().signal;

  it('hands freed slots to accounts in turn, not in arrival order', async () => {
    const scheduler = new FairScheduler(new AdaptiveLimit({ initial: 1, min: 1, max: 1 }));
    const first = await scheduler.acquire('a', never);
    const order: string[] = [];
    const queued = ['a', 'a', 'a', 'b', 'c'].map((account) =>
      scheduler.acquire(account, never).then((release) => {
        order.push(account);
        release();
      }),
    );
    first();
    await Promise.all(queued);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'a']);
    expect(scheduler.inFlight).toBe(0);
  });

  it('hands a freed slot to the account that used least lately, by the ledger it is given', async () => {
    const use: Record<string, number> = { heavy: 50, light: 1 };
    const scheduler = new FairScheduler(new AdaptiveLimit({ initial: 1, min: 1, max: 1 }), 1, {
      useOf: (account) => use[account] ?? 0,
      outweighs: () => false,
    });
    const first = await scheduler.acquire('other', never);
    const order: string[] = [];
    const queued = ['heavy', 'heavy', 'light'].map((account) =>
      scheduler.acquire(account, never).then((release) => {
        order.push(account);
        release();
      }),
    );
    first();
    await Promise.all(queued);
    expect(order).toEqual(['light', 'heavy', 'heavy']);
  });

  it('holds an account to 8 calls in flight while the ledger says it outweighs a running flow', async () => {
    let outweighs = true;
    const scheduler = new FairScheduler(new AdaptiveLimit({ initial: 64, min: 1, max: 64 }), 1, {
      useOf: () => 0,
      outweighs: (flow) => outweighs && flow === 'heavy',
    });
    const granted: Release[] = [];
    const calls = Array.from({ length: 20 }, () =>
      scheduler.acquire('heavy', never).then((release) => granted.push(release)),
    );
    await Promise.resolve();
    expect(scheduler.inFlight).toBe(8);
    // Another account is not held back by it.
    (await scheduler.acquire('light', never))();
    // Once it no longer outweighs anyone, a freed slot lets the rest go.
    outweighs = false;
    granted[0]!();
    await Promise.all(calls);
    expect(scheduler.inFlight).toBe(19);
  });

  it('drops a waiting call whose deadline passes, with its reason', async () => {
    const scheduler = new FairScheduler(new AdaptiveLimit({ initial: 1, min: 1, max: 1 }));
    const held: Release = await scheduler.acquire('a', never);
    const deadline = new AbortController();
    const waiting = scheduler.acquire('b', deadline.signal);
    expect(scheduler.waiting).toBe(1);
    deadline.abort(new Error('too late'));
    await expect(waiting).rejects.toThrow('too late');
    expect(scheduler.waiting).toBe(0);
    held();
    expect(scheduler.inFlight).toBe(0);
  });
});
