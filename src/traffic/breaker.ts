/**
 * A circuit breaker: open for `cooldownMs` after `threshold` faults in a row, then half-open for
 * `probes` calls. Written by hand: what counts as a fault depends on who failed
 * (service-health.ts), which cockatiel's breakers cannot express.
 *
 * A probe slot is handed out as a `Pass` and comes back through it: `release()` frees the slot
 * when the call told nothing (refused further on, abandoned, thrown before it was sent). A
 * success or a fault ends the half-open round and every pass of it with it, so a release that
 * comes late never frees a slot of a later round. Whoever takes a pass releases it in a `finally`.
 */
import type { BreakerState } from '../core/signals.js';

/** A call the breaker let through; `release()` is idempotent and safe after any outcome. */
export interface Pass {
  release(): void;
}

/** A closed breaker's pass: it holds no slot. */
export const NO_SLOT: Pass = Object.freeze({ release: () => undefined });

/** One pass for several: its release gives back every slot they hold. */
export function allOf(passes: readonly Pass[]): Pass {
  const holding = passes.filter((pass) => pass !== NO_SLOT);
  if (holding.length === 0) return NO_SLOT;
  return { release: () => holding.forEach((pass) => pass.release()) };
}

export class Breaker {
  private stateName: BreakerState = 'closed';
  private faultsInARow = 0;
  private openedAt = 0;
  private probesOut = 0;
  /** Counts half-open rounds: a pass frees a slot only in the round that handed it out. */
  private round = 0;

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

  /**
   * Would a call be let through now? Takes nothing; turns an open breaker half-open after its
   * cooldown. What refuses a call is checked with this before any slot is taken.
   */
  admits(now: number): boolean {
    if (this.stateName === 'open' && now - this.openedAt >= this.cooldownMs) {
      this.probesOut = 0;
      this.round += 1;
      this.set('half-open');
    }
    return (
      this.stateName === 'closed' ||
      (this.stateName === 'half-open' && this.probesOut < this.probes)
    );
  }

  /** Lets a call through, taking a probe slot when half-open; null (and nothing taken) if not. */
  admit(now: number): Pass | null {
    if (!this.admits(now)) return null;
    if (this.stateName === 'closed') return NO_SLOT;
    this.probesOut += 1;
    const round = this.round;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        if (round === this.round && this.probesOut > 0) this.probesOut -= 1;
      },
    };
  }

  success(): void {
    this.faultsInARow = 0;
    this.endRound();
    if (this.stateName !== 'closed') this.set('closed');
  }

  fault(now: number): void {
    this.faultsInARow += 1;
    if (
      this.stateName === 'half-open' ||
      (this.stateName === 'closed' && this.faultsInARow >= this.threshold)
    ) {
      this.openedAt = now;
      this.endRound();
      this.set('open');
    }
  }

  /** An outcome settles the round: its passes' slots are no longer counted. */
  private endRound(): void {
    if (this.stateName === 'half-open') this.round += 1;
    this.probesOut = 0;
  }

  private set(state: BreakerState): void {
    this.stateName = state;
    this.onChange?.(state);
  }
}
