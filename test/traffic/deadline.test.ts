/** A call's clocks: the deadline's signal, an attempt's limit under it, and the backoff's sleep. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../../src/core/errors.js';
import { abortAfter, sleep, timeoutError } from '../../src/traffic/deadline.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('abortAfter', () => {
  it('aborts at its time with the error the caller should see, not before', () => {
    const timed = abortAfter(100, () => timeoutError('smshistory', 100));
    vi.advanceTimersByTime(99);
    expect(timed.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(timed.signal.reason).toMatchObject({ code: ErrorCode.UpstreamTimeout });
    expect((timed.signal.reason as Error).message).toContain('within 100 ms');
  });

  it('aborts with its parent, and a cleared one never fires', () => {
    const parent = new AbortController();
    const attempt = abortAfter(1_000, () => timeoutError('ownednumbers', 1_000), parent.signal);
    parent.abort(new Error('the deadline'));
    expect((attempt.signal.reason as Error).message).toBe('the deadline');
    const cleared = abortAfter(10, () => timeoutError('ownednumbers', 10));
    cleared.clear();
    vi.advanceTimersByTime(20);
    expect(cleared.signal.aborted).toBe(false);
  });
});

describe('sleep', () => {
  it('waits its time, and stops at once with the reason when the signal aborts', async () => {
    const never = new AbortController().signal;
    let woke = false;
    void sleep(50, never).then(() => (woke = true));
    await vi.advanceTimersByTimeAsync(49);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(woke).toBe(true);

    const deadline = new AbortController();
    const cut = sleep(10_000, deadline.signal);
    deadline.abort(new Error('out of time'));
    await expect(cut).rejects.toThrow('out of time');
    const late = new AbortController();
    late.abort(new Error('already'));
    await expect(sleep(1, late.signal)).rejects.toThrow('already');
  });
});
