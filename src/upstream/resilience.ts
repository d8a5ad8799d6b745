/**
 * Retries and a circuit breaker around the upstream client (cockatiel). All three operations
 * are reads, so transient failures (reset, refused, 502/503/504, timeout) are retried with
 * exponential backoff and decorrelated jitter. One breaker per upstream origin: after
 * `breakerThreshold` consecutive faults of the service itself it fails fast for
 * `breakerCooldownMs`, then lets one probe through and closes again when it succeeds.
 * Refused credentials and bad answers for one account never open the breaker.
 */
import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  retry,
  wrap,
} from 'cockatiel';
import { ErrorCode, UpstreamError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { UpstreamClient } from './client.js';

export interface ResilienceOptions {
  /** Extra attempts after a retryable failure. */
  readonly retries: number;
  /** First backoff delay; later ones grow exponentially (with jitter) up to 2 s. */
  readonly retryBaseDelayMs: number;
  /** Consecutive upstream faults that open the breaker. */
  readonly breakerThreshold: number;
  /** How long the open breaker fails fast before letting a probe through. */
  readonly breakerCooldownMs: number;
  readonly logger?: Logger;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface ResilientUpstreamClient extends UpstreamClient {
  breakerState(): BreakerState;
}

const isUpstreamError = (error: Error): error is UpstreamError => error instanceof UpstreamError;

export function withResilience(
  client: UpstreamClient,
  options: ResilienceOptions,
): ResilientUpstreamClient {
  const retryPolicy = retry(
    handleWhen((error) => isUpstreamError(error) && error.retryable),
    {
      maxAttempts: options.retries,
      backoff: new ExponentialBackoff({ initialDelay: options.retryBaseDelayMs, maxDelay: 2_000 }),
    },
  );
  const breaker = circuitBreaker(
    handleWhen((error) => isUpstreamError(error) && error.upstreamFault),
    {
      halfOpenAfter: options.breakerCooldownMs,
      breaker: new ConsecutiveBreaker(options.breakerThreshold),
    },
  );
  const log = options.logger;
  retryPolicy.onRetry((event) => {
    const error = 'error' in event ? event.error : undefined;
    log?.warn(
      {
        attempt: event.attempt,
        delayMs: Math.round(event.delay),
        code: (error as UpstreamError | undefined)?.code,
      },
      `retrying: ${error?.message ?? 'upstream call'}`,
    );
  });
  breaker.onBreak(() =>
    log?.error(
      { cooldownMs: options.breakerCooldownMs },
      'upstream circuit breaker opened: failing fast',
    ),
  );
  breaker.onHalfOpen(() => log?.warn('upstream circuit breaker half-open: probing'));
  breaker.onReset(() => log?.info('upstream circuit breaker closed: upstream healthy again'));

  // Retry outside the breaker: every attempt is seen by the breaker, and an open breaker stops the retries.
  const policy = wrap(retryPolicy, breaker);
  const run = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await policy.execute(call);
    } catch (error) {
      if (error instanceof BrokenCircuitError) {
        throw new UpstreamError(
          ErrorCode.UpstreamUnavailable,
          `The SMS service is failing; calls to it are paused for up to ${Math.ceil(options.breakerCooldownMs / 1000)} s`,
          { cause: error },
        );
      }
      throw error;
    }
  };

  return {
    history: (credentials, request) => run(() => client.history(credentials, request)),
    ownedNumbers: (credentials, type) => run(() => client.ownedNumbers(credentials, type)),
    allOwnedNumbers: (credentials) => run(() => client.allOwnedNumbers(credentials)),
    breakerState: () => STATE_NAMES[breaker.state],
  };
}

const STATE_NAMES: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
};
