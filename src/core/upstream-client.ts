/**
 * The service's three operations as every layer calls them: src/upstream/client.ts implements
 * them, src/traffic/traffic.ts wraps them. Here so traffic, below the upstream layer, can name it.
 */
import type { Context } from '@opentelemetry/api';
import type { Credentials } from './credentials.js';
import type { History, HistoryRequest, NumberType, OwnedNumber } from './domain.js';
import type { Named } from './identity.js';

/** Who a call is for, worked out once where the call is made (a request's: its ticket's). */
export interface Caller {
  readonly identity: Named;
  /** Charges the caller's flow `units` of work: each attempt sent for it is. */
  readonly bill: (units: number) => void;
}

export interface CallOptions {
  /** Aborts the call; its `reason`, when an UpstreamError, is what the call fails with. */
  readonly signal?: AbortSignal;
  /** When the request arrived (performance.now()): which calls in flight it may join. @default now */
  readonly arrivedAt?: number;
  /** Who the call is for. @default named from the credentials where it enters traffic control */
  readonly caller?: Caller;
  /** The operation span's OpenTelemetry context, when traced: each attempt's span is its child. */
  readonly trace?: Context;
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
  /** The caller of calls made for `identity`, billed on traffic control's ledger (absent below). */
  callerOf?(identity: Named): Caller;
}
