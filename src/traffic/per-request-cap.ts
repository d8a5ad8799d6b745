/**
 * The per-request cap on upstream calls in flight. One is made for every GraphQL request, so it
 * is kept to a counter and a queue: p-limit builds a queue class, promises and bound functions
 * per instance, which the bench found at about 2% of the gateway's time on a small query.
 */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/** Runs tasks at most `concurrency` at a time, the waiting ones in the order they came. */
export function createLimit(concurrency: number): Limit {
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new RangeError('concurrency must be a whole number of at least 1');
  }
  let active = 0;
  const waiting: (() => void)[] = [];
  // A finished task hands its slot straight to the next waiting one, if any.
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  const run = <T>(task: () => Promise<T>): Promise<T> => {
    let result: Promise<T>;
    try {
      result = task();
    } catch (error) {
      result = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    result.then(release, release);
    return result;
  };
  return (task) => {
    if (active < concurrency) {
      active++;
      return run(task);
    }
    return new Promise<void>((resolve) => waiting.push(resolve)).then(() => run(task));
  };
}
