/**
 * The service's three operations as every layer calls them: src/upstream/client.ts implements
 * this over HTTP, src/traffic/traffic.ts wraps it (gates, deadline, fair share, retries), and the
 * loaders, the context and live updates call it. It lives here, with the records it returns, so
 * that traffic control, which sits below the upstream layer, can name what it wraps.
 */
import type { Credentials } from './credentials.js';
import type { History, HistoryRequest, NumberType, OwnedNumber } from './domain.js';

export interface CallOptions {
  /** Aborts the call; its `reason`, when an UpstreamError, is what the call fails with. */
  readonly signal?: AbortSignal;
  /**
   * When the caller's request arrived (performance.now()): an identical call already in flight
   * (src/upstream/shared-calls.ts) is joined only if it was sent at most JOIN_WINDOW_MS before,
   * so no answer reflects the service from longer before its request. @default now
   */
  readonly arrivedAt?: number;
}

export interface UpstreamClient {
  history(
    credentials: Credentials,
    request: HistoryRequest,
    options?: CallOptions,
  ): Promise<History>;
  ownedNumbers(
    credentials: Credentials,
    type: Exclude<NumberType, 'UNKNOWN'>,
    options?: CallOptions,
  ): Promise<OwnedNumber[]>;
  allOwnedNumbers(credentials: Credentials, options?: CallOptions): Promise<OwnedNumber[]>;
}
