/**
 * What this copy remembers about each account's traffic between requests: the 429 window the
 * service set for it, and its own circuit breaker. Accounts are known only by a fingerprint, an
 * HMAC of sys_id and token under a key made at start-up, so nothing here can be turned back into
 * credentials, and a wrong token for someone's sys_id is a different account from theirs.
 *
 * The map is bounded: an account with nothing to remember is dropped at once, and past
 * `maxAccounts` the oldest entry goes (forgetting fails open: the call is simply made).
 */
import { randomBytes } from 'node:crypto';
import { credentialsHmac, type Credentials } from '../core/credentials.js';
import { Breaker, type BreakerState } from './breaker.js';

export interface AccountTrafficOptions {
  readonly breakerThreshold: number;
  readonly breakerCooldownMs: number;
  /** Told when an account's breaker changes state (the account by fingerprint only). */
  readonly onBreakerChange?: (fingerprint: string, state: BreakerState) => void;
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
  private readonly key = randomBytes(32);
  private readonly fingerprints = new WeakMap<Credentials, string>();
  private readonly states = new Map<string, AccountState>();
  private readonly maxAccounts: number;

  constructor(private readonly options: AccountTrafficOptions) {
    this.maxAccounts = options.maxAccounts ?? 10_000;
  }

  /** Accounts currently remembered (for tests and metrics). */
  get size(): number {
    return this.states.size;
  }

  fingerprint(credentials: Credentials): string {
    let fingerprint = this.fingerprints.get(credentials);
    if (fingerprint === undefined) {
      fingerprint = credentialsHmac(this.key, credentials).slice(0, 22);
      this.fingerprints.set(credentials, fingerprint);
    }
    return fingerprint;
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
