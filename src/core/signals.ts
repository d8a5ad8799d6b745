/** What calls to the service report: upstream and traffic emit them, metrics consume them. */

/** The service's three operations (docs/upstream-quirks.md). */
export type UpstreamOperation = 'smshistory' | 'ownednumbers' | 'allownednumbers';

export type BreakerState = 'closed' | 'open' | 'half-open';

/** Why a call was refused before it reached the service. */
export type RefusalReason =
  'rate_limited' | 'account_breaker' | 'service_breaker' | 'refused_credentials';

/** The shared adaptive limit and the calls under it, at one moment. */
export interface ConcurrencySnapshot {
  readonly limit: number;
  readonly inFlight: number;
  readonly waiting: number;
}

/** Told of every upstream attempt and refusal, for metrics. */
export interface UpstreamObserver {
  /** One finished attempt: `outcome` is "ok" or the error code it failed with. */
  attempt(operation: UpstreamOperation, seconds: number, outcome: string): void;
  /** One call refused before reaching the service (429 window, an open breaker). */
  refused?(reason: RefusalReason): void;
  /** One call answered by an identical one already in flight instead of being sent. */
  joined?(operation: UpstreamOperation): void;
}
