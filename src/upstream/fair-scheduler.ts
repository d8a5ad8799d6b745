/**
 * Admission of calls to the service, shared by every request of this copy: at most the adaptive
 * limit in flight, and when calls have to wait, the free slots go round-robin between accounts,
 * one call each in turn. One account's 200-number fan-out therefore holds a place in line next to
 * another account's single call instead of in front of it. Written by hand: it is a few lines of
 * bookkeeping, and what the queues are keyed by (a credentials fingerprint) is ours.
 */
import type { AdaptiveLimit } from './adaptive-limit.js';

/** Hands the slot back; `rttMs` feeds the adaptive limit when the service answered. */
export type Release = (feedback?: {
  readonly rttMs?: number;
  readonly overloaded?: boolean;
}) => void;

interface Waiter {
  readonly grant: (release: Release) => void;
}

export class FairScheduler {
  private inFlightCount = 0;
  /** Waiting calls per account; Map order is the round-robin order (served account goes last). */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(private readonly limit: AdaptiveLimit) {}

  get inFlight(): number {
    return this.inFlightCount;
  }

  get waiting(): number {
    let count = 0;
    for (const queue of this.queues.values()) count += queue.length;
    return count;
  }

  /**
   * Resolves with a release function once the call may go; rejects with `signal.reason` if the
   * signal aborts first (the call's deadline), leaving the queue as if it had never come.
   */
  acquire(account: string, signal: AbortSignal): Promise<Release> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.queues.size === 0 && this.inFlightCount < this.limit.current) {
      return Promise.resolve(this.take());
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        this.remove(account, waiter);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.queues.get(account);
      if (queue) queue.push(waiter);
      else this.queues.set(account, [waiter]);
    });
  }

  private take(): Release {
    this.inFlightCount += 1;
    let released = false;
    return (feedback) => {
      if (released) return;
      released = true;
      if (feedback?.overloaded) this.limit.overloaded();
      else if (feedback?.rttMs !== undefined) this.limit.sample(feedback.rttMs, this.inFlightCount);
      this.inFlightCount -= 1;
      this.dispatch();
    };
  }

  /** Fills free slots from the queues, one call per account in turn. */
  private dispatch(): void {
    while (this.inFlightCount < this.limit.current) {
      const next = this.queues.entries().next();
      if (next.done) return;
      const [account, queue] = next.value;
      const waiter = queue.shift();
      this.queues.delete(account);
      if (queue.length > 0) this.queues.set(account, queue);
      if (waiter) waiter.grant(this.take());
    }
  }

  private remove(account: string, waiter: Waiter): void {
    const queue = this.queues.get(account);
    if (!queue) return;
    const index = queue.indexOf(waiter);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(account);
  }
}
