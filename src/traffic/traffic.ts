/**
 * The service treated as a shared, finite resource. Every call from any request goes through
 * here, on its way to the client (one attempt each):
 *
 * 0. The account is the sys_id (its keyed hash, CredentialMemory.account): every token of one
 *    sys_id shares its 429 window, breaker and fair share. Every answer also tells the memory
 *    whether the service accepted the credentials (verification.ts).
 * 1. Gates, before anything is sent: credentials the service refused lately (UNAUTHENTICATED,
 *    remembered refusedTtlMs), the account's 429 window (RATE_LIMITED), the account's own
 *    breaker and the whole-service breaker (UPSTREAM_UNAVAILABLE). A refused call costs nothing.
 * 2. A deadline: `timeoutMs` bounds the whole wait for the answer (waiting for a slot, every
 *    attempt and every backoff). A retry starts only if the time left can hold its backoff plus
 *    a typical answer (the service's lightly loaded latency; before any answer is seen, as long
 *    as the failed attempt took); a hung service answers UPSTREAM_TIMEOUT at the deadline.
 * 3. Fair share: a slot from the FairScheduler, whose adaptive limit follows the service's latency,
 *    with each account's calls in flight capped to `accountShare` of it.
 * 4. Retries of transient faults (reset, 502/503/504, timeouts of one attempt), exponential
 *    backoff with decorrelated jitter (cockatiel's generator). A 429 is never retried.
 * 5. Bookkeeping of what happened: faults feed the account's breaker and, when they are evidence
 *    about the service as a whole, the service's (service-health.ts); a 429 opens the account's
 *    window for Retry-After (or `defaultRetryAfterMs`; for the sys_id's unaccepted tokens alone
 *    when the credentials were not accepted lately) and nothing else: it is about that account,
 *    so it never shrinks the shared limit. A timeout shrinks the shared limit only when it is
 *    evidence about the whole service (faults from two accounts), so one account's hung calls
 *    cannot throttle the others. Time spent waiting for a slot in this copy is never evidence: a
 *    call that timed out having spent less than half its attempt limit on the wire is abandoned,
 *    not a fault.
 */
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import { FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS } from '../config/fixed.js';
import type { Credentials } from '../core/credentials.js';
import { CredentialMemory } from './verification.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import { AccountTraffic, type AccountRefusal } from './accounts.js';
import { AdaptiveLimit } from './adaptive-limit.js';
import { processLoop } from './loop-monitor.js';
import type { BreakerState, ConcurrencySnapshot, RefusalReason } from '../core/signals.js';
import type { CallOptions, UpstreamClient } from '../core/upstream-client.js';
import { FairScheduler, type Release } from './fair-scheduler.js';
import { accountTenant, UNVERIFIED } from './fair-admission.js';
import { ServiceHealth } from './service-health.js';

export interface TrafficOptions {
  /** The whole wait for one answer, retries and backoff included. */
  readonly timeoutMs: number;
  /** One attempt's own limit, so a hung attempt can still be retried in time. @default timeoutMs */
  readonly attemptTimeoutMs?: number;
  /** Extra attempts after a transient failure. */
  readonly retries: number;
  /** First backoff delay; later ones grow exponentially (with jitter) up to 2 s. */
  readonly retryBaseDelayMs: number;
  /** Faults in a row that open a breaker (an account's, or the service's on service-wide evidence). */
  readonly breakerThreshold: number;
  /** How long an open breaker fails fast before letting a probe through. */
  readonly breakerCooldownMs: number;
  /** Hard cap of calls in flight from this copy (the pool's connections). */
  readonly maxInFlight: number;
  /** Where the adaptive limit starts. @default maxInFlight (open until the service slows) */
  readonly initialConcurrency?: number;
  /** The adaptive limit's floor. @default min(4, maxInFlight) */
  readonly minConcurrency?: number;
  /**
   * The 429 window when the service sends no usable Retry-After.
   * @default FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS
   */
  readonly defaultRetryAfterMs?: number;
  /** The fraction of the adaptive limit one account may hold in flight. @default 0.5 */
  readonly accountShare?: number;
  /** Verdicts on credentials and the names of accounts. @default a new CredentialMemory */
  readonly credentials?: CredentialMemory;
  readonly logger?: Logger;
  /** Told of each call refused without reaching the service. */
  readonly onRefused?: (reason: RefusalReason) => void;
  /**
   * Told of each attempt sent to the service, answered or not, with the credentials it was made
   * for: admission charges it to their tenant (UNITS_PER_CALL in fair-admission.ts).
   */
  readonly onAttempt?: (credentials: Credentials) => void;
  /** What a flow has used lately (admission's ledger): waiting calls of the least go first. */
  readonly usage?: (flow: string) => number;
}

export type { ConcurrencySnapshot, RefusalReason };

export interface ManagedUpstreamClient extends UpstreamClient {
  /** The whole-service breaker (accounts' own breakers are not shown). */
  breakerState(): BreakerState;
  concurrency(): ConcurrencySnapshot;
  /** Accounts with an open breaker, and accounts inside a 429 window, now. */
  accountStates(): { breakerOpen: number; rateLimited: number };
  /** Verdicts on credentials, and the names of accounts (shared with the response cache). */
  readonly credentials: CredentialMemory;
  /**
   * True when the service accepts these credentials: from memory when it answered them lately,
   * otherwise one cheap call (ownednumbers, local). Concurrent checks of one pair share the call.
   * Throws the call's error when the service could not say (an outage).
   */
  verify(credentials: Credentials): Promise<boolean>;
}

/** A Retry-After longer than this is read as this: the gateway never pauses an account for hours. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

export function withTrafficControl(
  client: UpstreamClient,
  options: TrafficOptions,
): ManagedUpstreamClient {
  const log = options.logger;
  const attemptTimeoutMs = Math.min(
    options.attemptTimeoutMs ?? options.timeoutMs,
    options.timeoutMs,
  );
  const defaultRetryAfterMs = options.defaultRetryAfterMs ?? FIXED_UPSTREAM_RETRY_AFTER_DEFAULT_MS;
  const limit = new AdaptiveLimit({
    initial: options.initialConcurrency ?? options.maxInFlight,
    min: options.minConcurrency ?? Math.min(4, options.maxInFlight),
    max: options.maxInFlight,
    ownDelayMs: (since) => processLoop().stallSince(since),
  });
  const scheduler = new FairScheduler(limit, options.accountShare ?? 0.5, options.usage);
  const memory = options.credentials ?? new CredentialMemory();
  const accounts = new AccountTraffic({
    breakerThreshold: options.breakerThreshold,
    breakerCooldownMs: options.breakerCooldownMs,
    onBreakerChange: (account, state) => {
      if (state === 'open') log?.warn({ account }, "an account's calls keep failing: pausing them");
      else if (state === 'closed') log?.info({ account }, "an account's calls succeed again");
    },
  });
  const service = new ServiceHealth({
    threshold: options.breakerThreshold,
    cooldownMs: options.breakerCooldownMs,
    onChange: (state) => {
      if (state === 'open') {
        log?.error(
          { cooldownMs: options.breakerCooldownMs },
          'upstream circuit breaker opened: failing fast',
        );
      } else if (state === 'half-open') {
        log?.warn('upstream circuit breaker half-open: probing');
      } else {
        log?.info('upstream circuit breaker closed: upstream healthy again');
      }
    },
  });
  const backoffFactory = new ExponentialBackoff({
    initialDelay: options.retryBaseDelayMs,
    maxDelay: 2_000,
  });

  /** Where a 429 window opened by credentials not accepted lately is kept. */
  const unacceptedOf = (account: string): string => `unaccepted:${account}`;

  /** Throws when the call may not go now; admits a breaker's half-open probe. */
  function gate(credentials: Credentials, account: string, now: number): void {
    // Refused lately: the same answer again, without asking (queries and subscriptions alike),
    // so an invented pair costs the service one call per refusedTtlMs at most.
    if (memory.verdict(credentials) === 'refused') {
      options.onRefused?.('refused_credentials');
      throw new UpstreamError(ErrorCode.Unauthenticated, 'The SMS service refused the credentials');
    }
    const refusal =
      accounts.refusal(account, now) ??
      (memory.verdict(credentials) === 'accepted'
        ? undefined
        : accounts.refusal(unacceptedOf(account), now));
    if (refusal) {
      options.onRefused?.(refusal.kind === 'rate-limited' ? 'rate_limited' : 'account_breaker');
      throw refusalError(refusal, account);
    }
    if (!service.admit(now)) {
      options.onRefused?.('service_breaker');
      throw new UpstreamError(
        ErrorCode.UpstreamUnavailable,
        `The SMS service is failing; calls to it are paused for up to ${Math.ceil(options.breakerCooldownMs / 1000)} s`,
        { retryAfterMs: Math.max(1, service.retryInMs(now)), refusedFor: 'service' },
      );
    }
  }

  /** Records what one attempt's failure says, and returns the error the caller should see. */
  function settle(
    error: unknown,
    credentials: Credentials,
    account: string,
    release: Release,
    rttMs: number,
    operation: string,
  ): unknown {
    const abandon = (): void => {
      release();
      accounts.abandoned(account);
      service.abandoned();
    };
    if (!(error instanceof UpstreamError)) {
      abandon();
      return error;
    }
    const now = Date.now();
    if (error.code === ErrorCode.RateLimited) {
      // About this account only: its window, never the shared limit.
      const windowMs = Math.min(error.retryAfterMs ?? defaultRetryAfterMs, MAX_RETRY_AFTER_MS);
      release();
      // Credentials the service has not accepted lately open a window for the sys_id's
      // unaccepted tokens alone: a wrong token never pauses the account's own calls, and a new
      // token per request cannot walk through the window either.
      const scope = memory.verdict(credentials) === 'accepted' ? account : unacceptedOf(account);
      accounts.rateLimited(scope, now, windowMs);
      service.answered();
      return new UpstreamError(error.code, error.message, { retryAfterMs: windowMs });
    }
    if (error.code === ErrorCode.UpstreamTimeout && rttMs < attemptTimeoutMs / 2) {
      // The deadline passed while this call was mostly waiting in this copy, not on the wire.
      abandon();
      return error;
    }
    if (error.upstreamFault) {
      const serviceWide = service.fault(account, now, error.connectionFault);
      release(
        error.code === ErrorCode.UpstreamTimeout && serviceWide ? { overloaded: true } : undefined,
      );
      accounts.fault(account, now);
      return error;
    }
    // Refused credentials, success other than "1", unreadable bodies: the service did answer.
    if (error.code === ErrorCode.Unauthenticated) memory.refused(credentials);
    release({ rttMs, operation });
    accounts.answered(account);
    service.answered();
    return error;
  }

  async function run<T>(
    operation: string,
    credentials: Credentials,
    call: (options: CallOptions) => Promise<T>,
  ): Promise<T> {
    const account = memory.account(credentials);
    const startedAt = Date.now();
    gate(credentials, account, startedAt);
    const deadlineAt = startedAt + options.timeoutMs;
    const deadline = abortAfter(options.timeoutMs, () =>
      timeoutError(operation, options.timeoutMs),
    );
    let backoff: IBackoff<unknown> | undefined;
    try {
      for (let attempt = 1; ; attempt += 1) {
        let release: Release;
        try {
          // Ordered by what its flow used lately: an invented pair's call counts as the whole
          // class of unverified credentials, never as a fresh account that has used nothing.
          const flow =
            memory.verdict(credentials) === 'accepted' ? accountTenant(account) : UNVERIFIED;
          release = await scheduler.acquire(account, deadline.signal, flow);
        } catch (error) {
          // The deadline passed while waiting for a slot: no answer either way, so a probe the
          // gate admitted must not keep its breaker half-open.
          accounts.abandoned(account);
          service.abandoned();
          throw error;
        }
        const attemptLimit =
          attemptTimeoutMs < deadlineAt - Date.now()
            ? abortAfter(
                attemptTimeoutMs,
                () => timeoutError(operation, attemptTimeoutMs),
                deadline.signal,
              )
            : null;
        const sent = performance.now();
        options.onAttempt?.(credentials);
        try {
          const result = await call({ signal: (attemptLimit ?? deadline).signal });
          release({ rttMs: performance.now() - sent, operation });
          memory.accepted(credentials);
          accounts.answered(account);
          service.answered();
          return result;
        } catch (error) {
          const failure = settle(
            error,
            credentials,
            account,
            release,
            performance.now() - sent,
            operation,
          );
          if (
            !(failure instanceof UpstreamError) ||
            !failure.retryable ||
            attempt > options.retries
          ) {
            throw failure;
          }
          backoff = backoff ? backoff.next(undefined) : backoffFactory.next();
          const delayMs = backoff.duration;
          // A retry must fit: its backoff plus a typical answer, within what is left of the deadline.
          // Typical: the service's lightly loaded latency, or before any answer, this attempt's.
          const typicalMs = limit.baseline(operation) ?? performance.now() - sent;
          if (deadlineAt - Date.now() < delayMs + typicalMs) throw failure;
          log?.warn(
            { attempt, delayMs: Math.round(delayMs), code: failure.code },
            `retrying: ${failure.message}`,
          );
          await sleep(delayMs, deadline.signal);
          gate(credentials, account, Date.now());
        } finally {
          attemptLimit?.clear();
        }
      }
    } finally {
      deadline.clear();
    }
  }

  const verifying = new Map<string, Promise<boolean>>();
  function verify(credentials: Credentials): Promise<boolean> {
    const verdict = memory.verdict(credentials);
    if (verdict !== 'unknown') return Promise.resolve(verdict === 'accepted');
    const fingerprint = memory.identities.of(credentials).pair;
    let pending = verifying.get(fingerprint);
    if (!pending) {
      // ownednumbers (local): the smallest answer that needs valid credentials; the memory is
      // told the verdict by run() itself, like for any other call.
      pending = run('ownednumbers', credentials, (o) =>
        client.ownedNumbers(credentials, 'LOCAL', o),
      ).then(
        () => true,
        (error: unknown) => {
          if (error instanceof UpstreamError && error.code === ErrorCode.Unauthenticated) {
            return false;
          }
          throw error;
        },
      );
      verifying.set(fingerprint, pending);
      void pending.then(
        () => verifying.delete(fingerprint),
        () => verifying.delete(fingerprint),
      );
    }
    return pending;
  }

  return {
    history: (credentials, request) =>
      run('smshistory', credentials, (o) => client.history(credentials, request, o)),
    ownedNumbers: (credentials, type) =>
      run('ownednumbers', credentials, (o) => client.ownedNumbers(credentials, type, o)),
    allOwnedNumbers: (credentials) =>
      run('allownednumbers', credentials, (o) => client.allOwnedNumbers(credentials, o)),
    breakerState: () => service.state,
    accountStates: () => accounts.counts(Date.now()),
    credentials: memory,
    verify,
    concurrency: () => ({
      limit: limit.current,
      inFlight: scheduler.inFlight,
      waiting: scheduler.waiting,
    }),
  };
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

function timeoutError(operation: string, ms: number): UpstreamError {
  return new UpstreamError(
    ErrorCode.UpstreamTimeout,
    `The SMS service did not answer ${operation} within ${ms} ms`,
    { retryable: true },
  );
}

interface Timed {
  readonly signal: AbortSignal;
  clear(): void;
}

/** A signal that aborts after `ms` (with the reason `reason()` makes), or when `parent` does. */
function abortAfter(ms: number, reason: () => UpstreamError, parent?: AbortSignal): Timed {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), ms);
  const onParentAbort = (): void => controller.abort(parent?.reason);
  parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
