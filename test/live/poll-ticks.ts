/**
 * A barrier on a poll loop's ticks: a tick that holds a seen state ends by saving it
 * (src/live/poll-loop.ts, saved on every tick, polled or not), so counting a bus's saveSeen calls
 * tells a test that a poll it caused is over, where a fixed pause would only guess.
 */
import type { LiveBus } from '../../src/live/bus.js';

/** Counts the ticks `bus` has seen end from now on; returns the count so far. */
export function ticksOf(bus: LiveBus): () => number {
  let ended = 0;
  const save = bus.saveSeen.bind(bus);
  bus.saveSeen = async (topic, seen) => {
    await save(topic, seen);
    ended += 1;
  };
  return () => ended;
}
