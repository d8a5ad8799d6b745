/**
 * The gateway's own records: what the upstream's JSON means once its quirks are resolved
 * (src/upstream/wire.ts does that). Resolvers read these and nothing rawer.
 */

/** LOCAL and TOLLFREE are documented; UNKNOWN stands for any other value the service sends. */
export type NumberType = 'LOCAL' | 'TOLLFREE' | 'UNKNOWN';

/** OUTBOUND is documented, INBOUND is its natural counterpart; UNKNOWN is anything else. */
export type MessageDirection = 'OUTBOUND' | 'INBOUND' | 'UNKNOWN';

export interface OwnedNumber {
  readonly tid: string;
  readonly number: string;
  readonly type: NumberType;
  /** null where the upstream sends "" */
  readonly webhook: string | null;
}

export interface MessageStatus {
  /** The leading status code (200, 400, or any other the service sends); null if none. */
  readonly code: number | null;
  readonly text: string;
  readonly ok: boolean;
  /** The status exactly as the service sent it. */
  readonly raw: string;
}

export interface Message {
  readonly id: string;
  readonly systemId: string;
  readonly sentAt: Date;
  readonly tid: string;
  readonly phone: string;
  readonly direction: MessageDirection;
  readonly body: string;
  readonly mms: boolean;
  /** null where the upstream sends "" */
  readonly mediaUrl: string | null;
  readonly status: MessageStatus;
}

export interface History {
  readonly tid: string;
  readonly number: string;
  readonly requestedCount: number;
  readonly totalCount: number;
  readonly createdAt: Date | null;
  readonly mostRecentMessageId: string | null;
  readonly mostRecentAt: Date | null;
  readonly optIn: boolean | null;
  readonly messages: readonly Message[];
}

/** A history page as the upstream addresses it. Bounds pass through to the service unchanged. */
export interface HistoryRequest {
  readonly tid: string;
  readonly number: string;
  readonly start: number;
  readonly end: number;
}
