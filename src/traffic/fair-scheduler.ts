/**
 * Admission of calls to the service, shared by every request of this copy: at most the adaptive
 * limit in flight, and when calls have to wait, the free slots go round-robin between accounts,
 * one call each in turn. One account's 200-number fan-out therefore holds a place in line next to
 * another account's single call instead of in front of it.
 *
 * Work-conserving, as a partitioned limiter that lets a partition borrow what others leave
 * unused (Netflix concurrency-limits): an account alone may use every slot but a small reserve
 * (RESERVE_FRACTION of the limit), so a newcomer's first call never waits behind another
 * account's hung ones; once other accounts have calls waiting, each account holds at most `share`
 * of the limit, and the slots it frees go to them. Written by hand: it is a few lines of
 * bookkeeping, and what the queues are keyed by (the account, a keyed hash of the sys_id) is ours.
 */
import type { AdaptiveLimit } from './adaptive-limit.js';
import { RoundRobinLines } from './round-robin-lines.js';

/** Hands the slot back; `rttMs` feeds the adaptive limit when the service answered. */
export type Release = (feedback?: {
  readonly rttMs?: number;
  /** The operation answered (its latency is judged against its own baseline). */
  readonly operation?: string;
  readonly overloaded?: boolean;
}) => void;

/** Of the limit, what one account alone leaves free for an account that comes next. */
const RESERVE_FRACTION = 1 / 16;

interface Waiter {
  readonly grant: (release: Release) => void;
}

export class FairScheduler {
  private inFlightCount = 0;
  /** Waiting calls, one line per account, served round-robin. */
  private readonly queues = new RoundRobinLines<Waiter>();
  /** Calls in flight per account (only accounts with some). */
  private readonly perAccount = new Map<string, number>();

  /** `share`: the fraction of the limit one account may hold in flight, from 0 to 1. */
  constructor(
    private readonly limit: AdaptiveLimit,
    private readonly share = 1,
  ) {}

  /** The most calls one account may have in flight while others wait. */
  get accountCap(): number {
    return Math.max(1, Math.floor(this.limit.current * this.share));
  }

  /** The most calls `account` may have in flight now: nearly all of them when no one else waits. */
  private capOf(account: string): number {
    const othersWaiting = this.queues.keys > (this.queues.has(account) ? 1 : 0);
    if (othersWaiting) return this.accountCap;
    const limit = this.limit.current;
    return Math.max(1, limit - Math.ceil(limit * RESERVE_FRACTION));
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  get waiting(): number {
    return this.queues.waiting;
  }

  /**
   * Resolves with a release function once the call may go; rejects with `signal.reason` if the
   * signal aborts first (the call's deadline), leaving the queue as if it had never come.
   */
  acquire(account: string, signal: AbortSignal): Promise<Release> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (
      this.queues.keys === 0 &&
      this.inFlightCount < this.limit.current &&
      (this.perAccount.get(account) ?? 0) < this.capOf(account)
    ) {
      return Promise.resolve(this.take(account));
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        this.queues.remove(account, waiter);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queues.push(account, waiter);
      // Another account at its share may be all that is queued: this call may still go now.
      this.dispatch();
    });
  }

  private take(account: string): Release {
    this.inFlightCount += 1;
    this.perAccount.set(account, (this.perAccount.get(account) ?? 0) + 1);
    let released = false;
    return (feedback) => {
      if (released) return;
      released = true;
      if (feedback?.overloaded) this.limit.overloaded();
      else if (feedback?.rttMs !== undefined) {
        this.limit.sample(
          feedback.rttMs,
          this.inFlightCount,
          this.queues.keys > 0,
          feedback.operation,
        );
      }
      this.inFlightCount -= 1;
      const left = (this.perAccount.get(account) ?? 1) - 1;
      if (left > 0) this.perAccount.set(account, left);
      else this.perAccount.delete(account);
      this.dispatch();
    };
  }

  /**
   * Fills free slots from the queues, one call per account in turn, skipping accounts at their
   * share (they keep their place until one of their calls ends).
   */
  private dispatch(): void {
    this.queues.serve(
      (account) => (this.perAccount.get(account) ?? 0) < this.capOf(account),
      (account, waiter) => waiter.grant(this.take(account)),
      () => this.inFlightCount < this.limit.current,
    );
  }
}
