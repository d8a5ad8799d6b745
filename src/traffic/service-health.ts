/**
 * The breaker for the service as a whole. It opens only on evidence that the service itself is
 * down, never on one account's trouble:
 * - a connection-level fault (refused, unresolvable, connect timeout) is such evidence whoever
 *   made the call: the service cannot even be reached;
 * - any other fault (5xx, timeout, reset) counts only once faults have come from at least two
 *   accounts within `windowMs`: one account's calls failing alone stays that account's business
 *   (its own breaker, in accounts.ts, handles it).
 * `threshold` such faults in a row, with no answer from the service in between, open it.
 * Accounts are sys_ids (their keyed hash, accounts.ts): five tokens of one sys_id are one account.
 */
import { Breaker, type BreakerState } from './breaker.js';

/** Distinct failing accounts that make a fault evidence about the whole service. */
const MIN_FAILING_ACCOUNTS = 2;

export interface ServiceHealthOptions {
  readonly threshold: number;
  readonly cooldownMs: number;
  /** How long a failing account counts as failing. @default 10000 */
  readonly windowMs?: number;
  readonly onChange?: (state: BreakerState) => void;
}

export class ServiceHealth {
  private readonly breaker: Breaker;
  /** Account -> time of its last fault; Map order is oldest first. */
  private readonly failing = new Map<string, number>();
  private readonly windowMs: number;

  constructor(options: ServiceHealthOptions) {
    this.breaker = new Breaker(options.threshold, options.cooldownMs, options.onChange);
    this.windowMs = options.windowMs ?? 10_000;
  }

  get state(): BreakerState {
    return this.breaker.state;
  }

  retryInMs(now: number): number {
    return this.breaker.retryInMs(now);
  }

  admit(now: number): boolean {
    return this.breaker.admit(now);
  }

  answered(): void {
    this.breaker.success();
  }

  abandoned(): void {
    this.breaker.abandon();
  }

  /** Records a fault; true when it counted as evidence about the whole service. */
  fault(account: string, now: number, connectionFault: boolean): boolean {
    for (const [failed, at] of this.failing) {
      if (now - at < this.windowMs) break;
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
