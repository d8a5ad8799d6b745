/**
 * Slots for calls to the service, at most the adaptive limit in flight. A freed slot goes to the
 * waiting account that used least lately by the ledger requests' seats are ordered by too
 * (ledger.ts, `useOf`): a 200-number fan-out waits beside another account's single call.
 * Work-conserving: an account alone may use all but RESERVE_FRACTION (for a newcomer's first
 * call); while others wait, `share`; while it outweighs a lighter flow on a busy loop,
 * OUTWEIGHING_IN_FLIGHT.
 */
import type { AdaptiveLimit } from './adaptive-limit.js';
import type { Release } from './fair-admission.js';
import type { Ledger } from './ledger.js';

/** Of the limit, what one account alone leaves free for an account that comes next. */
const RESERVE_FRACTION = 1 / 16;
/** Calls in flight of an account outweighing another on a busy loop: 2x the service's, at least
 * this (240 answers arriving together held a bystander's 10-50 ms: the loop handles all first). */
const OUTWEIGHING_IN_FLIGHT = 8;

/** What orders calls: what a flow used lately (a freed slot goes to the least) and whether, on a
 * busy loop, another flow used far less; without a ledger, turns alone. */
const NO_LEDGER: Pick<Ledger, 'useOf' | 'outweighs'> = { useOf: () => 0, outweighs: () => false };

interface Waiter {
  /** Whose use orders it: the account's flow, or the class of unverified credentials. */
  readonly flow: string;
  readonly grant: (release: Release) => void;
}

export class FairScheduler {
  private inFlightCount = 0;
  /** Waiting calls, one line per account, in turn order (a served account goes last). */
  private readonly queues = new Map<string, Waiter[]>();
  private waitingCount = 0;
  /** Calls in flight per account (only accounts with some). */
  private readonly perAccount = new Map<string, number>();
  /** Calls at the service lately: of those out, its normal latency's share of the round trip. */
  private atService = 0;

  /** `share`: of the limit, what one account may hold while others wait. */
  constructor(
    private readonly limit: AdaptiveLimit,
    private readonly share = 1,
    private readonly ledger = NO_LEDGER,
  ) {}

  /** Whether `account` may send one more call now: nearly all slots are its when no one waits. */
  private mayTake(account: string, flow: string): boolean {
    const held = this.perAccount.get(account) ?? 0;
    const limit = this.limit.current;
    const othersWaiting = this.queues.size > (this.queues.has(account) ? 1 : 0);
    const cap = othersWaiting
      ? Math.max(1, Math.floor(limit * this.share))
      : Math.max(1, limit - Math.ceil(limit * RESERVE_FRACTION));
    if (held >= cap) return false;
    // Below the floor of the outweighing cap the ledger cannot say no: most calls never ask it.
    if (held < OUTWEIGHING_IN_FLIGHT || !this.ledger.outweighs(flow)) return true;
    return held < Math.ceil(2 * this.atService);
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** A release once the call may go; `signal.reason` if it aborts first (leaving no trace). */
  acquire(account: string, signal: AbortSignal, flow = account): Promise<Release> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (
      this.queues.size === 0 &&
      this.inFlightCount < this.limit.current &&
      this.mayTake(account, flow)
    ) {
      return Promise.resolve(this.take(account));
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        flow,
        grant: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        const line = this.queues.get(account) ?? [];
        const index = line.indexOf(waiter);
        if (index >= 0) {
          line.splice(index, 1);
          this.waitingCount -= 1;
          if (line.length === 0) this.queues.delete(account);
        }
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const line = this.queues.get(account);
      if (line) line.push(waiter);
      else this.queues.set(account, [waiter]);
      this.waitingCount += 1;
      // Another account at its share may be all that is queued: this call may still go now.
      this.dispatch();
    });
  }

  private take(account: string): Release {
    this.inFlightCount += 1;
    this.perAccount.set(account, (this.perAccount.get(account) ?? 0) + 1);
    let released = false;
    return ({ rttMs, operation, overloaded } = {}) => {
      if (released) return;
      released = true;
      if (overloaded) this.limit.overloaded();
      else if (rttMs !== undefined) {
        this.limit.sample(rttMs, this.inFlightCount, this.queues.size > 0, operation);
        const share = Math.min(1, (this.limit.baseline(operation) ?? rttMs) / Math.max(rttMs, 1));
        this.atService += 0.1 * (this.inFlightCount * share - this.atService);
      }
      this.inFlightCount -= 1;
      const left = (this.perAccount.get(account) ?? 1) - 1;
      if (left > 0) this.perAccount.set(account, left);
      else this.perAccount.delete(account);
      this.dispatch();
    };
  }

  /** Fills free slots: each to the account under its share that used least (ties: in turn). */
  private dispatch(): void {
    while (this.waitingCount > 0 && this.inFlightCount < this.limit.current) {
      let next: string | undefined;
      let least = Number.POSITIVE_INFINITY;
      for (const [account, line] of this.queues) {
        const flow = line[0]!.flow;
        if (!this.mayTake(account, flow)) continue;
        const use = this.ledger.useOf(flow);
        if (use < least) {
          least = use;
          next = account;
        }
      }
      if (next === undefined) return;
      const line = this.queues.get(next) as Waiter[];
      this.queues.delete(next);
      const waiter = line.shift() as Waiter;
      if (line.length > 0) this.queues.set(next, line);
      this.waitingCount -= 1;
      waiter.grant(this.take(next));
    }
  }
}
