/**
 * The breaker for the service as a whole. It opens only on evidence that the service itself is
 * down, never on one account's trouble (that account's own breaker, accounts.ts, handles it): a
 * connection-level fault (refused, unresolvable, connect timeout) whoever made the call, or any
 * other fault once faults came from at least two accounts (sys_ids) within FAILING_WINDOW_MS.
 */
import type { Breaker } from './breaker.js';

/** Distinct failing accounts that make a fault evidence about the whole service. */
const MIN_FAILING_ACCOUNTS = 2;
/** How long a failing account counts as failing. */
const FAILING_WINDOW_MS = 10_000;

export class ServiceHealth {
  /** Account -> time of its last fault; Map order is oldest first. */
  private readonly failing = new Map<string, number>();

  /** Answers close `breaker`; a call that told nothing gives its probe back (breaker.ts). */
  constructor(readonly breaker: Breaker) {}

  /** Records a fault; true when it counted as evidence about the whole service. */
  fault(account: string, now: number, connectionFault: boolean): boolean {
    for (const [failed, at] of this.failing) {
      if (now - at < FAILING_WINDOW_MS) break;
      this.failing.delete(failed);
    }
    this.failing.delete(account);
    this.failing.set(account, now);
    // A half-open breaker's probe failing is evidence enough: the probe is the test.
    if (
      connectionFault ||
      this.failing.size >= MIN_FAILING_ACCOUNTS ||
      this.breaker.state === 'half-open'
    ) {
      this.breaker.fault(now);
      return true;
    }
    return false;
  }
}
