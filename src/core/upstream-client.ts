/**
 * The service's three operations as every layer calls them: src/upstream/client.ts implements
 * them, src/traffic/traffic.ts wraps them. Here so traffic, below the upstream layer, can name it.
 */
import type { Credentials } from './credentials.js';
import type { History, HistoryRequest, NumberType, OwnedNumber } from './domain.js';

export interface CallOptions {
  /** Aborts the call; its `reason`, when an UpstreamError, is what the call fails with. */
  readonly signal?: AbortSignal;
  /** When the request arrived (performance.now()): which calls in flight it may join. @default now */
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
