/**
 * A topic's poll loop (src/live/poll-loop.ts), seen over SSE against a real loopback upstream
 * whose histories grow on command: catching up past a page, an unreadable record, failed polls
 * told once, and the 429 window obeyed.
 */
import { describe, expect, it, vi } from 'vitest';
import { liveStacks, polls } from '../fixtures/live-stack.js';
import { until } from '../../support/wait.js';
import { createMetrics } from '../../src/observability/metrics.js';

const POLL_MS = 50;
const ONE = { 'x-sys-id': 'AC-1', 'x-auth-token': 'tok-AC-1' };
const ON_A = 'subscription { messageAdded(tids: ["T-A"]) { id tid body } }';
const stacks = liveStacks();
const stack = (live: { failuresBeforeError?: number } = {}) =>
  stacks.start({ 'AC-1': ['T-A', 'T-B'] }, { live: { pollMs: POLL_MS, ...live } });

describe('the poll loop of a subscription', () => {
  it('catches up when more arrive at once than a poll page holds', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, ONE);
    await polls(s, 2);
    const ids = s.upstream.add('T-A', 45);
    await stream.waitFor(45);
    expect(stream.events.map((e) => (e.data?.messageAdded as { id: string }).id)).toEqual(ids);
  });

  it('an unreadable new record is one error event; the messages around it are delivered', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, ONE);
    await polls(s, 2);
    const [before] = s.upstream.add('T-A', 1);
    s.upstream.addUnreadable('T-A');
    const [after] = s.upstream.add('T-A', 1);
    await stream.waitFor(3);
    await polls(s, 2);
    expect(stream.events).toHaveLength(3);
    expect((stream.events[0]?.data?.messageAdded as { id: string }).id).toBe(before);
    expect(stream.events[1]).toMatchObject({
      data: null,
      errors: [{ path: ['messageAdded'], extensions: { code: 'UPSTREAM_ERROR' } }],
    });
    expect(stream.events[1]?.errors?.[0]?.message).toContain('GMTdate');
    expect((stream.events[2]?.data?.messageAdded as { id: string }).id).toBe(after);
  });

  it('reports a failing service once, after three failed polls, then carries on', async () => {
    const s = await stack();
    const stream = await s.open(ON_A, ONE);
    await polls(s, 2);
    s.upstream.failWith({ status: 503, text: '' });
    await stream.waitFor(1, 3_000);
    expect(stream.events[0]).toMatchObject({
      data: null,
      errors: [
        {
          message:
            'Live updates for T-A are failing: The SMS service answered smshistory with HTTP 503',
          extensions: { code: 'UPSTREAM_ERROR' },
        },
      ],
    });
    await polls(s, 3);
    expect(stream.events).toHaveLength(1); // once, not every poll
    s.upstream.failWith(null);
    await polls(s, 1);
    const ids = s.upstream.add('T-A', 1);
    await stream.waitFor(2);
    expect((stream.events[1]?.data?.messageAdded as { id: string }).id).toBe(ids[0]);
  });

  it('polls obey the 429 window like queries: no poll reaches the service inside it', async () => {
    const metrics = createMetrics();
    const failed = vi.spyOn(metrics.live, 'pollFailed');
    const s = await stacks.start(
      { 'AC-1': ['T-A', 'T-B'] },
      { live: { pollMs: POLL_MS, failuresBeforeError: 1 }, metrics },
    );
    const stream = await s.open(ON_A, ONE);
    await polls(s, 2);
    s.upstream.failWith({ status: 429, text: '', headers: { 'retry-after': '2' } });
    await polls(s, 1);
    s.upstream.failWith(null);
    const atWindow = s.upstream.callsOf('smshistory');
    await stream.waitFor(1);
    expect(stream.events[0]?.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // Five more polls fail inside the 2 s window (250 ms of it; the rest is slack for a loaded
    // machine): refused before the service, not sent.
    const failedAtWindow = failed.mock.calls.length;
    await until(() => failed.mock.calls.length >= failedAtWindow + 5, 1_500);
    expect(s.upstream.callsOf('smshistory')).toBe(atWindow);
    // After the window, polling resumes and delivers what arrived meanwhile.
    const ids = s.upstream.add('T-A', 1);
    await stream.waitFor(2, 15_000);
    expect((stream.events[1]?.data?.messageAdded as { id: string }).id).toBe(ids[0]);
  });
});
