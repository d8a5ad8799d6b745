/**
 * The gate every call to the service passes, over verdicts per pair (verification.ts), each
 * account's 429 window and breaker (accounts.ts) and the service's breaker (service-health.ts).
 * `check` refuses before anything is sent, or lets the attempt go with a pass holding the probe
 * slots it took; `answered` and `settle` record what the attempt showed, and the caller releases
 * the pass in a `finally` (a slot the outcome did not settle comes back, whatever was thrown).
 */
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Named } from '../core/identity.js';
import type { TrafficOptions } from './traffic.js';
import { AccountTraffic, type AccountRefusal } from './accounts.js';
import type { Release } from './fair-admission.js';
import { ServiceHealth } from './service-health.js';
import { allOf, Breaker, type Pass } from './breaker.js';
import type { CredentialMemory } from './verification.js';

/** A Retry-After longer than this is read as this: the gateway never pauses an account for hours. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

type Configured =
  'breakerThreshold' | 'breakerCooldownMs' | 'defaultRetryAfterMs' | 'attemptTimeoutMs';
export interface CallGateOptions extends Pick<TrafficOptions, Configured | 'logger' | 'onRefused'> {
  readonly memory: CredentialMemory;
}

/** Where a 429 window opened by credentials not accepted lately is kept. */
const unacceptedOf = (account: string): string => `unaccepted:${account}`;

export class CallGate {
  readonly accounts: AccountTraffic;
  readonly service: ServiceHealth;

  constructor(private readonly options: CallGateOptions) {
    const { logger: log, breakerThreshold: threshold, breakerCooldownMs: cooldownMs } = options;
    this.accounts = new AccountTraffic(threshold, cooldownMs, (account, state) => {
      if (state === 'open') log?.warn({ account }, "an account's calls keep failing: pausing them");
      else if (state === 'closed') log?.info({ account }, "an account's calls succeed again");
    });
    const serviceBreaker = new Breaker(threshold, cooldownMs, (state) => {
      if (state === 'open')
        log?.error({ cooldownMs }, 'upstream circuit breaker opened: failing fast');
      else if (state === 'half-open') log?.warn('upstream circuit breaker half-open: probing');
      else log?.info('upstream circuit breaker closed: upstream healthy again');
    });
    this.service = new ServiceHealth(serviceBreaker);
  }

  /**
   * Throws when the call may not go now, holding nothing. Else the pass holds the probe slots
   * of the half-open breakers that let it through: the caller releases it in a `finally`.
   */
  check({ account, pair }: Named, now: number): Pass {
    const { memory, onRefused } = this.options;
    const verdict = memory.verdictOf(pair);
    if (verdict === 'refused') {
      onRefused?.('refused_credentials');
      throw new UpstreamError(ErrorCode.Unauthenticated, 'The SMS service refused the credentials');
    }
    // Everything that can refuse the call is asked before any slot is taken: a probe slot taken
    // for the account and then kept by the service breaker's refusal was an account locked out
    // until restart.
    const scopes = verdict === 'accepted' ? [account] : [account, unacceptedOf(account)];
    for (const scope of scopes) {
      const refusal = this.accounts.refusal(scope, now);
      if (refusal) {
        onRefused?.(refusal.kind === 'rate-limited' ? 'rate_limited' : 'account_breaker');
        throw refusalError(refusal, account);
      }
    }
    if (!this.service.breaker.admits(now)) throw this.serviceRefusal(now);
    // Nothing refuses it now: each breaker hands out its slot. Should one refuse after all, the
    // slots taken so far go back before the refusal is thrown.
    const taken: Pass[] = [];
    for (const admit of [
      ...scopes.map((scope) => () => this.accounts.admit(scope, now)),
      () => this.service.breaker.admit(now),
    ]) {
      const pass = admit();
      if (pass === null) {
        for (const held of taken) held.release();
        throw this.serviceRefusal(now);
      }
      taken.push(pass);
    }
    return allOf(taken);
  }

  private serviceRefusal(now: number): UpstreamError {
    this.options.onRefused?.('service_breaker');
    return new UpstreamError(
      ErrorCode.UpstreamUnavailable,
      `The SMS service is failing; calls to it are paused for up to ${Math.ceil(this.options.breakerCooldownMs / 1000)} s`,
      { retryAfterMs: Math.max(1, this.service.breaker.retryInMs(now)), refusedFor: 'service' },
    );
  }

  /** The service answered the call: the pair is accepted, the account and the service well. */
  answered(identity: Named): void {
    this.options.memory.accepted(identity);
    this.accounts.answered(identity.account, Date.now());
    this.service.breaker.success();
  }

  /**
   * Records what one attempt's failure says, and returns the error the caller should see. A
   * failure that says nothing about the service records nothing: the check's pass, released by
   * the caller, gives back the probe slots it held.
   */
  settle(
    error: unknown,
    identity: Named,
    release: Release,
    rttMs: number,
    operation: string,
  ): unknown {
    const { memory } = this.options;
    const { account } = identity;
    // No answer from the service, or a timeout spent mostly waiting in this copy: abandoned.
    if (
      !(error instanceof UpstreamError) ||
      (error.code === ErrorCode.UpstreamTimeout && rttMs < this.options.attemptTimeoutMs / 2)
    ) {
      release();
      return error;
    }
    const now = Date.now();
    if (error.code === ErrorCode.RateLimited) {
      // Unaccepted credentials open the window for the sys_id's unaccepted tokens alone: a wrong
      // token never pauses the account, and new tokens share the window.
      const windowMs = Math.min(
        error.retryAfterMs ?? this.options.defaultRetryAfterMs,
        MAX_RETRY_AFTER_MS,
      );
      release();
      const scope =
        memory.verdictOf(identity.pair) === 'accepted' ? account : unacceptedOf(account);
      this.accounts.rateLimited(scope, now, windowMs);
      this.service.breaker.success();
      return new UpstreamError(error.code, error.message, { retryAfterMs: windowMs });
    }
    if (error.upstreamFault) {
      const serviceWide = this.service.fault(account, now, error.connectionFault);
      release(
        error.code === ErrorCode.UpstreamTimeout && serviceWide ? { overloaded: true } : undefined,
      );
      this.accounts.fault(account, now);
      return error;
    }
    // Refused credentials, success other than "1", unreadable bodies: the service did answer.
    if (error.code === ErrorCode.Unauthenticated) memory.refused(identity);
    release({ rttMs, operation });
    this.accounts.answered(account, now);
    this.service.breaker.success();
    return error;
  }
}

function refusalError(refusal: AccountRefusal, account: string): UpstreamError {
  const seconds = Math.max(1, Math.ceil(refusal.retryInMs / 1000));
  if (refusal.kind === 'rate-limited') {
    return new UpstreamError(
      ErrorCode.RateLimited,
      `The SMS service is rate limiting this account; try again in ${seconds} s`,
      { retryAfterMs: refusal.retryInMs, refusedFor: account },
    );
  }
  return new UpstreamError(
    ErrorCode.UpstreamUnavailable,
    `The SMS service keeps failing this account's calls; they are paused for up to ${seconds} s`,
    { retryAfterMs: Math.max(1, refusal.retryInMs), refusedFor: account },
  );
}
