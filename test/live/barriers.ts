/**
 * Barriers on a copy's poll loops, read off its bus (src/live/poll-loop.ts, src/live/hub.ts): every
 * tick begins with a claim, made only once the copy listens on the topic; a tick that holds a seen
 * state ends by saving it, polled or not; and a stopped topic stops listening only after its loop
 * has finished any tick under way. Counting them tells a test that a copy listens, that a poll it
 * caused is over, or that no poll can come any more, where a fixed pause would only guess.
 */
import { vi } from 'vitest';
import type { LiveBus } from '../../src/live/bus.js';
import type { GrowingUpstream } from '../../support/growing-upstream.js';
import { POLL_PAGE } from '../fixtures/live-reads.js';

/**
 * Polls that reached `upstream` from a stack whose loop reads POLL_PAGE (`live.pageSize`), told
 * apart from subscriptions' first reads as test/fixtures/live-reads.ts does.
 */
export const pollsOf = (upstream: GrowingUpstream) =>
  upstream.calls.filter(
    (c) => c.operation === 'smshistory' && c.params.get('history_end') === String(POLL_PAGE),
  ).length;

export interface BusTicks {
  /**
   * Claims the bus has settled: ticks whose copy knows whether it polls. A claim fails (and the
   * copy does not poll) while a Redis connection is still being made: it counts all the same.
   */
  readonly claimed: () => number;
  /** Seen states saved: ticks of the copy that polls, over. */
  readonly ended: () => number;
  /** Topics no longer listened to: their loops stopped, no tick of theirs under way. */
  readonly stopped: () => number;
}

/** Calls of `spy` whose promise has settled, kept or failed. */
const settled = (spy: { mock: { settledResults: { type: string }[] } }) =>
  spy.mock.settledResults.filter((result) => result.type !== 'incomplete').length;

/** Counts from now on the ticks of the loops on `bus`. */
export function ticksOf(bus: LiveBus): BusTicks {
  const [claims, saves] = [vi.spyOn(bus, 'claim'), vi.spyOn(bus, 'saveSeen')];
  let stopped = 0;
  const listen = bus.listen.bind(bus);
  bus.listen = async (topic, listener) => {
    const unlisten = await listen(topic, listener);
    return async () => {
      await unlisten();
      stopped += 1;
    };
  };
  return { claimed: () => settled(claims), ended: () => settled(saves), stopped: () => stopped };
}
