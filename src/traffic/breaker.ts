/**
 * A circuit breaker: open for `cooldownMs` after `threshold` faults in a row, then half-open for
 * `probes` calls. Written by hand: what counts as a fault depends on who failed
 * (service-health.ts), which cockatiel's breakers cannot express.
 */
import type { BreakerState } from '../core/signals.js';

export class Breaker {
  private stateName: BreakerState = 'closed';
  private faultsInARow = 0;
  private openedAt = 0;
  private probesOut = 0;

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly onChange?: (state: BreakerState) => void,
    private readonly probes = 1,
  ) {}

  get state(): BreakerState {
    return this.stateName;
  }

  /** True when it is closed and has no faults pending: nothing worth remembering. */
  get idle(): boolean {
    return this.stateName === 'closed' && this.faultsInARow === 0;
  }

  /** Milliseconds until an open breaker lets a probe through (0 when not open). */
  retryInMs(now: number): number {
    return this.stateName === 'open' ? Math.max(0, this.openedAt + this.cooldownMs - now) : 0;
  }

  /** May a call go now? Turns an open breaker half-open after its cooldown, for one probe. */
  admit(now: number): boolean {
    if (this.stateName === 'open' && now - this.openedAt >= this.cooldownMs) {
      this.set('half-open');
      this.probesOut = 0;
    }
    if (this.stateName === 'closed') return true;
    if (this.stateName === 'half-open' && this.probesOut < this.probes) {
      this.probesOut += 1;
      return true;
    }
    return false;
  }

  success(): void {
    this.faultsInARow = 0;
    this.probesOut = 0;
    if (this.stateName !== 'closed') this.set('closed');
  }

  fault(now: number): void {
    this.faultsInARow += 1;
    if (
      this.stateName === 'half-open' ||
      (this.stateName === 'closed' && this.faultsInARow >= this.threshold)
    ) {
      this.openedAt = now;
      this.probesOut = 0;
      this.set('open');
    }
  }

  /** A call that was admitted ended without telling anything (aborted): free its probe slot. */
  abandon(): void {
    if (this.probesOut > 0) this.probesOut -= 1;
  }

  private set(state: BreakerState): void {
    this.stateName = state;
    this.onChange?.(state);
  }
}
