/**
 * What this copy remembers about each account's traffic between requests: the 429 window the
 * service set for it, and its own circuit breaker. An account is a sys_id, known only by its
 * keyed hash (`accountId`, via CredentialMemory.account): new tokens for one sys_id are the same
 * account, so they share its 429 window and breaker instead of walking around them.
 *
 * The map is bounded: an account with nothing to remember is dropped at once, and past
 * `maxAccounts` the oldest entry goes (forgetting fails open: the call is simply made).
 */
import { Breaker, type BreakerState } from './breaker.js';

/** Calls a recovering account's breaker lets through at once, so a burst is not all refused. */
export const ACCOUNT_BREAKER_PROBES = 3;

export interface AccountTrafficOptions {
  readonly breakerThreshold: number;
  readonly breakerCooldownMs: number;
  /** Told when an account's breaker changes state (the account by its keyed name only). */
  readonly onBreakerChange?: (account: string, state: BreakerState) => void;
  /** @default 10000 */
  readonly maxAccounts?: number;
}

interface AccountState {
  rateLimitedUntil: number;
  readonly breaker: Breaker;
}

/** Why a call of this account may not go now, and for how long. */
export type AccountRefusal =
  | { readonly kind: 'rate-limited'; readonly retryInMs: number }
  | { readonly kind: 'breaker-open'; readonly retryInMs: number };

export class AccountTraffic {
  private readonly states = new Map<string, AccountState>();
  private readonly maxAccounts: number;

  constructor(private readonly options: AccountTrafficOptions) {
    this.maxAccounts = options.maxAccounts ?? 10_000;
  }

  /** Accounts currently remembered (for tests and metrics). */
  get size(): number {
    return this.states.size;
  }

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

  /** Null when the account's call may go now (an open breaker's probe is admitted here). */
  refusal(account: string, now: number): AccountRefusal | null {
    const state = this.states.get(account);
    if (!state) return null;
    if (state.rateLimitedUntil > now) {
      return { kind: 'rate-limited', retryInMs: state.rateLimitedUntil - now };
    }
    if (!state.breaker.admit(now)) {
      return { kind: 'breaker-open', retryInMs: state.breaker.retryInMs(now) };
    }
    return null;
  }

  /** The service answered (anything but a fault). */
  answered(account: string): void {
    const state = this.states.get(account);
    if (!state) return;
    state.breaker.success();
    this.forgetIfIdle(account, state, Date.now());
  }

  /** The service failed this account's call (5xx, timeout, reset, unreachable). */
  fault(account: string, now: number): void {
    this.stateOf(account).breaker.fault(now);
  }

  /** The call ended without an answer or a fault (e.g. abandoned): free a half-open probe. */
  abandoned(account: string): void {
    this.states.get(account)?.breaker.abandon();
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
      if (this.states.size >= this.maxAccounts) {
        const oldest = this.states.keys().next();
        if (!oldest.done) this.states.delete(oldest.value);
      }
      const { breakerThreshold, breakerCooldownMs, onBreakerChange } = this.options;
      state = {
        rateLimitedUntil: 0,
        breaker: new Breaker(
          breakerThreshold,
          breakerCooldownMs,
          onBreakerChange && ((next) => onBreakerChange(account, next)),
          ACCOUNT_BREAKER_PROBES,
        ),
      };
      this.states.set(account, state);
    }
    return state;
  }

  private forgetIfIdle(account: string, state: AccountState, now: number): void {
    if (state.breaker.idle && state.rateLimitedUntil <= now) this.states.delete(account);
  }
}
