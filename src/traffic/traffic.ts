/**
 * The service as a shared, finite resource (docs/limits.md "Calls to the service"). Each call
 * starts its deadline (deadline.ts; each attempt has its own limit, so a hung one can be retried in
 * time); each attempt passes the gate (call-gate.ts), waits for a slot (fair-scheduler.ts), is
 * sent, recorded (call-gate.ts), and retried on transient faults when the time left allows (never
 * a 429). A breaker's probe slot the gate lets an attempt through on is given back when the
 * attempt ends, however it ends.
 */
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import type { Credentials } from '../core/credentials.js';
import type { UpstreamSettings } from '../config/config.js';
import type { CredentialMemory } from './verification.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import type { WarningRollup } from '../observability/warning-rollup.js';
import { CallGate } from './call-gate.js';
import { abortAfter, sleep, timeoutError } from './deadline.js';
import { AdaptiveLimit } from './adaptive-limit.js';
import { processLoop } from './loop-monitor.js';
import type { BreakerState, ConcurrencySnapshot, RefusalReason } from '../core/signals.js';
import type { Caller, CallOptions, UpstreamClient } from '../core/upstream-client.js';
import type { Named } from '../core/identity.js';
import { FairScheduler } from './fair-scheduler.js';
import { accountTenant, UNITS_PER_CALL, UNVERIFIED } from './fair-admission.js';
import type { Ledger } from './ledger.js';

/** The upstream settings (deadline, retries with backoff up to 2 s, breakers, 429 window), and: */
export interface TrafficOptions extends Omit<UpstreamSettings, 'url'> {
  /** Hard cap of calls in flight from this copy (the pool's connections). */
  readonly maxInFlight: number;
  /** Where the adaptive limit starts. @default maxInFlight (open until the service slows) */
  readonly initialConcurrency?: number;
  /** The adaptive limit's floor. @default min(4, maxInFlight) */
  readonly minConcurrency?: number;
  /** The fraction of the adaptive limit one account may hold while others wait. */
  readonly accountShare: number;
  /** Verdicts on credentials, shared with the response cache (src/app.ts makes them). */
  readonly credentials: CredentialMemory;
  readonly logger?: Logger;
  /** Where each retry's warning goes: rolled up per code and account (one line a window). */
  readonly warnings?: WarningRollup;
  /** Told of each call refused without reaching the service. */
  readonly onRefused?: (reason: RefusalReason) => void;
  /** The ledger (ledger.ts): calls of the flow that used least go first, and bills charge it. */
  readonly ledger?: Pick<Ledger, 'useOf' | 'outweighs' | 'chargeWork'>;
}

export interface ManagedUpstreamClient extends UpstreamClient {
  /** The whole-service breaker (accounts' own breakers are not shown). */
  breakerState(): BreakerState;
  concurrency(): ConcurrencySnapshot;
  /** Accounts with an open breaker, and accounts inside a 429 window, now. */
  accountStates(): { breakerOpen: number; rateLimited: number };
  /** Verdicts on credentials, and the names of accounts (shared with the response cache). */
  readonly credentials: CredentialMemory;
  /** Whether the service accepts these: remembered, else one shared call; throws in an outage. */
  verify(credentials: Credentials): Promise<boolean>;
  callerOf(identity: Named): Caller;
}

export function withTrafficControl(
  client: UpstreamClient,
  options: TrafficOptions,
): ManagedUpstreamClient {
  const { timeoutMs, retries } = options;
  const attemptTimeoutMs = Math.min(options.attemptTimeoutMs, timeoutMs);
  const limit = new AdaptiveLimit({
    initial: options.initialConcurrency ?? options.maxInFlight,
    min: options.minConcurrency ?? Math.min(4, options.maxInFlight),
    max: options.maxInFlight,
    ownDelayMs: (since) => processLoop().stallSince(since),
  });
  const scheduler = new FairScheduler(limit, options.accountShare, options.ledger);
  const memory = options.credentials;
  const gate = new CallGate({ ...options, memory, attemptTimeoutMs });
  const backoffFactory = new ExponentialBackoff({
    initialDelay: options.retryBaseDelayMs,
    maxDelay: 2_000,
  });

  // Ordered by what its flow used lately: an invented pair's call counts as the whole class of
  // unverified credentials, never as a fresh account that has used nothing.
  const flowOf = (identity: Named): string =>
    memory.verdictOf(identity.pair) === 'accepted' ? accountTenant(identity.account) : UNVERIFIED;
  /** Each attempt sent for the caller is work of its flow (UNITS_PER_CALL), polls included. */
  const callerOf = (identity: Named): Caller => ({
    identity,
    bill: (units) => options.ledger?.chargeWork(flowOf(identity), units),
  });
  async function run<T>(
    operation: string,
    credentials: Credentials,
    made: CallOptions | undefined,
    call: (options: CallOptions) => Promise<T>,
  ): Promise<T> {
    // Its request's caller, else (a call made without one) named here once.
    const caller = made?.caller ?? callerOf(memory.identities.of(credentials));
    const trace = made?.trace;
    const { identity } = caller;
    const { account } = identity;
    const deadlineAt = Date.now() + timeoutMs;
    const deadline = abortAfter(timeoutMs, () => timeoutError(operation, timeoutMs));
    let backoff: IBackoff<unknown> | undefined;
    try {
      for (let attempt = 1; ; attempt += 1) {
        // Refused here, the attempt holds nothing; let through, it may hold a breaker's probe
        // slot, which the `finally` gives back whatever ends the attempt (an outcome recorded
        // first settles the slot, and the release is then a no-op).
        const pass = gate.check(identity, Date.now());
        let failure: UpstreamError;
        let attemptMs: number;
        try {
          // The deadline passing while waiting for a slot is no answer either way: thrown as is.
          const release = await scheduler.acquire(account, deadline.signal, flowOf(identity));
          const attemptTimeout = () => timeoutError(operation, attemptTimeoutMs);
          const attemptLimit =
            attemptTimeoutMs < deadlineAt - Date.now()
              ? abortAfter(attemptTimeoutMs, attemptTimeout, deadline.signal)
              : null;
          const sent = performance.now();
          try {
            caller.bill(UNITS_PER_CALL);
            const result = await call({ signal: (attemptLimit ?? deadline).signal, trace });
            release({ rttMs: performance.now() - sent, operation });
            gate.answered(identity);
            return result;
          } catch (error) {
            attemptMs = performance.now() - sent;
            const settled = gate.settle(error, identity, release, attemptMs, operation);
            if (!(settled instanceof UpstreamError) || !settled.retryable || attempt > retries)
              throw settled;
            failure = settled;
          } finally {
            attemptLimit?.clear();
          }
        } finally {
          pass.release();
        }
        backoff = backoff ? backoff.next(undefined) : backoffFactory.next();
        const delayMs = backoff.duration;
        // A retry must fit its backoff plus a typical answer (the baseline, else this attempt's).
        const typicalMs = limit.baseline(operation) ?? attemptMs;
        if (deadlineAt - Date.now() < delayMs + typicalMs) throw failure;
        options.warnings?.warn({
          key: `retrying ${failure.code}`,
          account,
          fields: { attempt, delayMs: Math.round(delayMs), code: failure.code },
          message: `retrying: ${failure.message}`,
        });
        await sleep(delayMs, deadline.signal);
      }
    } finally {
      deadline.clear();
    }
  }

  const verifying = new Map<string, Promise<boolean>>();
  function verify(credentials: Credentials): Promise<boolean> {
    const identity = memory.identities.of(credentials);
    const verdict = memory.verdictOf(identity.pair);
    if (verdict !== 'unknown') return Promise.resolve(verdict === 'accepted');
    let pending = verifying.get(identity.pair);
    if (!pending) {
      // The smallest answer that needs valid credentials; run() records the verdict.
      pending = run('ownednumbers', credentials, { caller: callerOf(identity) }, (o) =>
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
      verifying.set(identity.pair, pending);
      const forget = (): boolean => verifying.delete(identity.pair);
      void pending.then(forget, forget);
    }
    return pending;
  }

  return {
    history: (credentials, request, made) =>
      run('smshistory', credentials, made, (o) => client.history(credentials, request, o)),
    ownedNumbers: (credentials, type, made) =>
      run('ownednumbers', credentials, made, (o) => client.ownedNumbers(credentials, type, o)),
    allOwnedNumbers: (credentials, made) =>
      run('allownednumbers', credentials, made, (o) => client.allOwnedNumbers(credentials, o)),
    callerOf,
    breakerState: () => gate.service.breaker.state,
    accountStates: () => gate.accounts.counts(Date.now()),
    credentials: memory,
    verify,
    concurrency: () => ({
      limit: limit.current,
      inFlight: scheduler.inFlight,
      waiting: scheduler.waiting,
    }),
  };
}
