/** The gateway's own records, read from the upstream's JSON by src/upstream/wire.ts. */

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

/** A history record that could not be read, kept in its place so only it fails, at its index. */
export interface UnreadableMessage {
  readonly unreadable: true;
  /** The record's `message_id` when at least that could be read, so paging can still find it. */
  readonly id: string | null;
  /** Why, safe to show a client (an UpstreamError: UPSTREAM_ERROR naming the field). */
  readonly error: Error;
}

/** One entry of a history page: a message, or the record in its place that could not be read. */
export type MessageRecord = Message | UnreadableMessage;

export function isUnreadable(record: MessageRecord): record is UnreadableMessage {
  return 'unreadable' in record;
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
  /** In the service's order; an unreadable record stays in its place (see UnreadableMessage). */
  readonly messages: readonly MessageRecord[];
}

/** A history page: positions [start, end) of one number (the wire's reading: history-end.ts). */
export interface HistoryRequest extends Range {
  readonly tid: string;
  readonly number: string;
}

/** Positions in a number's history, half-open [start, end), 0 being the newest message. */
export interface Range {
  readonly start: number;
  readonly end: number;
}
