/**
 * Pacing of one request's list fields on the event loop. graphql-js and graphql-jit complete an
 * answer in one run of the loop whenever its parts resolve together: 2,800 histories served by
 * one DataLoader batch are completed back to back, hundreds of milliseconds during which no other
 * request is read, answered or sent its upstream call. Neither executor can be told to yield, so
 * the list resolvers do it: once a request has held the loop for `sliceMs` in the current turn,
 * its next lists wait in a queue that a chain of `setImmediate`s drains, about `itemsPerTurn`
 * items a turn, with I/O (other requests) polled between turns.
 *
 * Hand-written rather than a scheduler library: it is a FIFO and a timer, and the executors only
 * need a promise for the list; items are the unit because completing a list costs per item.
 */

export interface PacingOptions {
  /** Loop time (ms) a request may take in one turn before its lists wait for later turns. */
  readonly sliceMs: number;
  /** Items (of the lists it lets through) a paced request completes per turn, at least one list. */
  readonly itemsPerTurn: number;
}

/**
 * Chosen on the aliased-history flood (bench/attack-floods.ts, alias-histories-half) on a shared,
 * busy 2-core machine: at 10 ms and 1,000 items another account's p50 was 16x its idle value; at
 * 3 ms and 300 items 2.5x to 15x over six runs (39x to 215x without pacing, five runs in the same
 * hours); at 2 ms and 150 the noise hid any gain. What is left is GC and serialising the answer.
 */
export const DEFAULT_PACING: PacingOptions = { sliceMs: 3, itemsPerTurn: 300 };

export interface Pacer {
  /**
   * Runs `work` now, or (once this request has used its slice of the turn) queues it for a later
   * turn and returns a promise of its result. `work` returns a list (or a promise of one).
   */
  run<T>(work: () => T): T | Promise<T>;
  /** Lists that waited for a later turn so far (for tests and diagnostics). */
  readonly deferred: number;
}

type Job = () => number;

export function createPacer(options: PacingOptions = DEFAULT_PACING): Pacer {
  // When this request's list work in the current turn began; -1 outside one. A setImmediate
  // scheduled at its start ends it: that runs once the loop moves on to its next phase.
  let sliceStart = -1;
  const endSlice = () => {
    sliceStart = -1;
  };
  const queue: Job[] = [];
  let draining = false;
  let deferred = 0;

  function drain(): void {
    sliceStart = performance.now();
    let items = 0;
    // Each job resolves its list here, synchronously; executors complete it in the microtasks
    // right after this callback, still within this turn.
    while (queue.length > 0 && items < options.itemsPerTurn) {
      items += Math.max(1, (queue.shift() as Job)());
    }
    if (queue.length > 0) setImmediate(drain);
    else {
      draining = false;
      setImmediate(endSlice);
    }
  }

  return {
    run(work) {
      if (!draining) {
        const now = performance.now();
        if (sliceStart < 0) {
          sliceStart = now;
          setImmediate(endSlice);
        }
        if (now - sliceStart < options.sliceMs) return work();
      }
      deferred += 1;
      return new Promise((resolve, reject) => {
        queue.push(() => {
          try {
            const result = work();
            resolve(result);
            return Array.isArray(result) ? result.length : 0;
          } catch (error) {
            reject(error);
            return 0;
          }
        });
        if (!draining) {
          draining = true;
          setImmediate(drain);
        }
      });
    },
    get deferred() {
      return deferred;
    },
  };
}
