/**
 * Barriers on a copy's poll loop, read off its bus (src/live/poll-loop.ts): every tick begins with
 * a claim, made only once the copy listens on the topic (src/live/hub.ts), and a tick that holds a
 * seen state ends by saving it, polled or not. Counting them tells a test that a copy listens, or
 * that a poll it caused is over, where a fixed pause would only guess.
 */
import type { LiveBus } from '../../src/live/bus.js';

export interface BusTicks {
  /** Claims the bus has answered: ticks whose copy knows whether it polls. */
  readonly claimed: () => number;
  /** Seen states saved: ticks of the copy that polls, over. */
  readonly ended: () => number;
}

/** Counts from now on the ticks of the loops on `bus`. */
export function ticksOf(bus: LiveBus): BusTicks {
  let [claimed, ended] = [0, 0];
  const [claim, save] = [bus.claim.bind(bus), bus.saveSeen.bind(bus)];
  bus.claim = async (topic) => {
    const answer = await claim(topic);
    claimed += 1;
    return answer;
  };
  bus.saveSeen = async (topic, seen) => {
    await save(topic, seen);
    ended += 1;
  };
  return { claimed: () => claimed, ended: () => ended };
}
