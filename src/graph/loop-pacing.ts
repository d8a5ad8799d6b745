/**
 * Pacing of one request's list fields: the executors complete an answer in one run of the loop
 * when its parts resolve together, and cannot be told to yield. So once a request has held the
 * loop for `sliceMs` this turn, its next lists wait for later turns, `itemsPerTurn` items each.
 */
interface PacingOptions {
  readonly sliceMs: number;
  /** Counted over the lists let through; at least one list a turn. */
  readonly itemsPerTurn: number;
}

/**
 * Chosen on bench/attack-floods.ts alias-histories-half: the best bystander p50 of those tried.
 * 100 items a turn, not 300: a turn of 300 histories with every message field completed in the
 * microtasks after it, and burst-heavy's bystander p50 sat on its bound (+0.4, +0.2 and -0.2 ms
 * from it); at 100, 2.7-3.5 ms under it. Alternating runs: alias-histories-half's p50 15.0-17.0 ms
 * against 17.2-19.6, the 200-number fan-out 68.1 against 70.3 ms.
 */
const DEFAULT_PACING: PacingOptions = { sliceMs: 3, itemsPerTurn: 100 };

export interface Pacer {
  /** Runs `work` (a list, or a promise of one) now, or once the slice is used, on a later turn. */
  run<T>(work: () => T): T | Promise<T>;
}

export function createPacer(options: PacingOptions = DEFAULT_PACING): Pacer {
  // When this request's list work this turn began; -1 outside one (a setImmediate ends it).
  let sliceStart = -1;
  const endSlice = () => {
    sliceStart = -1;
  };
  const queue: (() => number)[] = [];
  let draining = false;

  function drain(): void {
    sliceStart = performance.now();
    let items = 0;
    // Executors complete each list in the microtasks right after this callback: this turn.
    while (queue.length > 0 && items < options.itemsPerTurn) {
      items += Math.max(1, queue.shift()!());
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
  };
}
