/**
 * Each account's 429 window and circuit breaker, between requests. An account is a sys_id, so new
 * tokens for it share its window and breaker instead of walking around them. Bounded: an account
 * with nothing to remember is dropped, and past MAX_ACCOUNTS the oldest (failing open).
 */
import type { BreakerState } from '../core/signals.js';
import { Breaker, NO_SLOT, type Pass } from './breaker.js';

/** Calls a recovering account's breaker lets through at once, so a burst is not all refused. */
const ACCOUNT_BREAKER_PROBES = 3;
const MAX_ACCOUNTS = 10_000;

interface AccountState {
  rateLimitedUntil: number;
  readonly breaker: Breaker;
}

/** Why a call of this account may not go now, and for how long. */
export interface AccountRefusal {
  readonly kind: 'rate-limited' | 'breaker-open';
  readonly retryInMs: number;
}

export class AccountTraffic {
  private readonly states = new Map<string, AccountState>();

  /** `onBreakerChange` hears each account's breaker change (the account by its keyed name). */
  constructor(
    private readonly breakerThreshold: number,
    private readonly breakerCooldownMs: number,
    private readonly onBreakerChange: (account: string, state: BreakerState) => void,
  ) {}

  /** Accounts whose breaker is open or half-open now, and those inside a 429 window. */
  counts(now: number): { breakerOpen: number; rateLimited: number } {
    let breakerOpen = 0;
    let rateLimited = 0;
    for (const state of this.states.values()) {
      if (state.breaker.state !== 'closed') breakerOpen += 1;
      if (state.rateLimitedUntil > now) rateLimited += 1;
    }
    return { breakerOpen, rateLimited };
  }

  /** Null when the account's call may go now. Takes no probe slot: `admit` does. */
  refusal(account: string, now: number): AccountRefusal | null {
    const state = this.states.get(account);
    if (!state) return null;
    if (state.rateLimitedUntil > now) {
      return { kind: 'rate-limited', retryInMs: state.rateLimitedUntil - now };
    }
    if (!state.breaker.admits(now)) {
      return { kind: 'breaker-open', retryInMs: state.breaker.retryInMs(now) };
    }
    return null;
  }

  /**
   * Lets a call go, as `refusal` said it may: a half-open breaker's probe slot is held by the
   * pass until the call's outcome or its release. Null (nothing taken) if the breaker refuses.
   */
  admit(account: string, now: number): Pass | null {
    const state = this.states.get(account);
    return state ? state.breaker.admit(now) : NO_SLOT;
  }

  /** The service answered (anything but a fault). */
  answered(account: string, now: number): void {
    const state = this.states.get(account);
    if (!state) return;
    state.breaker.success();
    if (state.breaker.idle && state.rateLimitedUntil <= now) this.states.delete(account);
  }

  /** The service failed this account's call (5xx, timeout, reset, unreachable). */
  fault(account: string, now: number): void {
    this.stateOf(account).breaker.fault(now);
  }

  /** The service answered 429: calls of this account wait until `now + windowMs`. */
  rateLimited(account: string, now: number, windowMs: number): void {
    const state = this.stateOf(account);
    state.breaker.success();
    state.rateLimitedUntil = Math.max(state.rateLimitedUntil, now + windowMs);
  }

  private stateOf(account: string): AccountState {
    let state = this.states.get(account);
    if (!state) {
      if (this.states.size >= MAX_ACCOUNTS) this.states.delete(this.states.keys().next().value!);
      state = {
        rateLimitedUntil: 0,
        breaker: new Breaker(
          this.breakerThreshold,
          this.breakerCooldownMs,
          (next) => this.onBreakerChange(account, next),
          ACCOUNT_BREAKER_PROBES,
        ),
      };
      this.states.set(account, state);
    }
    return state;
  }
}
