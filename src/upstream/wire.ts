/**
 * The upstream's raw JSON -> the gateway's records: every wire quirk, here only
 * (docs/upstream-quirks.md). An unreadable message record fails alone, in its place. Errors name
 * the field and the kind of value found, never the value.
 */
import type {
  History,
  HistoryRequest,
  Message,
  MessageDirection,
  MessageRecord,
  MessageStatus,
  NumberType,
  OwnedNumber,
} from '../core/domain.js';
import { ErrorCode, UpstreamError } from '../core/errors.js';
import type { UpstreamOperation } from '../core/signals.js';

type JsonObject = Record<string, unknown>;

/** The fields of one record, so errors can say where they happened. */
class Reader {
  readonly object: JsonObject;

  /** `value` must be an object; `at` is its path with a trailing dot, or "" for the body. */
  constructor(
    private readonly operation: UpstreamOperation,
    value: unknown,
    private readonly at: string,
  ) {
    this.object = isObject(value) ? value : this.fail('', 'an object', value);
  }

  /** Throws UPSTREAM_ERROR naming the field (or, for key "", the record itself). */
  fail(key: string, expected: string, value: unknown): never {
    const path = key === '' ? this.at.slice(0, -1) : this.at + key;
    throw unexpected(this.operation, `\`${path}\` should be ${expected}, got ${describe(value)}`);
  }

  /** A text field; integers are accepted and kept as their decimal text. */
  text(key: string): string {
    const value = this.object[key];
    if (typeof value === 'string') return value;
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    return this.fail(key, 'a string', value);
  }

  /** Like text(), but a missing field, null or "" become `fallback`. */
  textOr<T>(key: string, fallback: T): string | T {
    return isNone(this.object[key]) ? fallback : this.text(key);
  }

  integer(key: string): number {
    const value = this.object[key];
    return toInteger(value) ?? this.fail(key, 'an integer', value);
  }

  /** An identifier documented as an integer: kept as text so large ids lose no digits. */
  integerId(key: string): string {
    const value = this.object[key];
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    if (typeof value === 'string' && INTEGER_TEXT.test(value.trim())) return value.trim();
    return this.fail(key, 'an integer', value);
  }

  timestamp(key: string): Date {
    const value = this.object[key];
    return (
      (typeof value === 'string' ? parseTimestamp(value) : null) ??
      this.fail(key, 'a "YYYY-MM-DD HH:MM:SS" timestamp', value)
    );
  }

  /** Missing, "" and all-zero dates mean "none"; anything else must be a valid timestamp. */
  optionalTimestamp(key: string): Date | null {
    const value = this.object[key];
    return isNone(value) || value === ZERO_TIMESTAMP ? null : this.timestamp(key);
  }
}

function isNone(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unexpected(operation: UpstreamOperation, what: string): UpstreamError {
  return new UpstreamError(
    ErrorCode.UpstreamError,
    `The SMS service sent an unexpected ${operation} response: ${what}`,
  );
}

const INTEGER_TEXT = /^-?\d+$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}$/;
export const ZERO_TIMESTAMP = '0000-00-00 00:00:00';
const STATUS = /^\s*(\d{3})(?!\d)[\s:.-]*([\s\S]*)$/;

/** The history's requested count, documented with a trailing space. */
export const HISTORY_REQUESTED_KEY = 'message_count_requested ';

/** The fields the service documents (and the unspaced count): `npm run doctor` reports others. */
export const WIRE_FIELDS = {
  history: [
    'success',
    HISTORY_REQUESTED_KEY,
    'message_count_requested',
    'total_message_count',
    'created_date',
    'most_recent_msg_id',
    'most_recent_date',
    'tid',
    'number',
    'optin',
    'messages',
  ],
  message: [
    'system_id',
    'message_id',
    'GMTdate',
    'tid',
    'phone',
    'direction',
    'body',
    'mms',
    'mms_url',
    'status',
  ],
  numbers: ['success', 'data'],
  number: ['number', 'tid', 'type', 'webhook'],
} as const;

/** The fields without which the readers here cannot serve the record (or the page). */
export const REQUIRED_WIRE_FIELDS = {
  history: ['total_message_count'],
  message: ['message_id', 'system_id', 'GMTdate', 'phone'],
  number: ['number', 'tid'],
} as const;

function toInteger(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
  if (typeof value === 'string' && INTEGER_TEXT.test(value.trim())) {
    const parsed = Number(value.trim());
    return Number.isSafeInteger(parsed) ? parsed : null;
  }
  return null;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return value === '' ? 'an empty string' : 'a string that is not one';
  return `a ${typeof value}`;
}

/** `YYYY-MM-DD HH:MM:SS` as UTC, or null. Read by position: match arrays were costly garbage. */
export function parseTimestamp(text: string): Date | null {
  const t = text.trim();
  if (!TIMESTAMP.test(t)) return null;
  const year = digits(t, 0, 4);
  const month = digits(t, 5, 7);
  const day = digits(t, 8, 10);
  const hour = digits(t, 11, 13);
  const minute = digits(t, 14, 16);
  const second = digits(t, 17, 19);
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC rolls 2026-02-30 over into March; a round trip catches impossible dates.
  const valid =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  return valid ? date : null;
}

/** The number written in text[from, to), all digits. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i += 1) value = value * 10 + text.charCodeAt(i) - 48;
  return value;
}

/**
 * A history repeats a handful of statuses on every message: each is read once and shared (frozen).
 * Past STATUS_MEMORY distinct texts (a service embedding ids in them) the memory starts over.
 */
const STATUS_MEMORY = 256;
const statuses = new Map<string, MessageStatus>();

export function parseStatus(raw: string): MessageStatus {
  let status = statuses.get(raw);
  if (status === undefined) {
    if (statuses.size >= STATUS_MEMORY) statuses.clear();
    status = Object.freeze(readStatus(raw));
    statuses.set(raw, status);
  }
  return status;
}

function readStatus(raw: string): MessageStatus {
  const m = STATUS.exec(raw);
  if (!m) return { code: null, text: raw.trim(), ok: false, raw };
  const code = Number(m[1]);
  return { code, text: (m[2] ?? '').trim(), ok: code >= 200 && code < 300, raw };
}

const NUMBER_TYPES = new Map<string, NumberType>([
  ['local', 'LOCAL'],
  ['tollfree', 'TOLLFREE'],
  ['toll-free', 'TOLLFREE'],
  ['toll_free', 'TOLLFREE'],
]);

export function parseNumberType(raw: string): NumberType {
  return NUMBER_TYPES.get(raw.trim().toLowerCase()) ?? 'UNKNOWN';
}

const DIRECTIONS = new Map<string, MessageDirection>([
  ['outbound', 'OUTBOUND'],
  ['inbound', 'INBOUND'],
]);

export function parseDirection(raw: string): MessageDirection {
  return DIRECTIONS.get(raw.trim().toLowerCase()) ?? 'UNKNOWN';
}

const YES = new Set(['yes', 'true', '1']);
const NO = new Set(['no', 'false', '0']);

/** "yes"/"no" as documented; true/false and 1/0 tolerated; null when it is none of these. */
export function parseYesNo(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const text = String(value).trim().toLowerCase();
  return YES.has(text) ? true : NO.has(text) ? false : null;
}

/** The body's JSON object after checking `success`; throws UPSTREAM_ERROR otherwise. */
function successfulObject(operation: UpstreamOperation, json: unknown): JsonObject {
  if (!isObject(json)) throw unexpected(operation, `expected a JSON object, got ${describe(json)}`);
  if (json.success === '1') return json;
  if (refusesCredentials(json.error))
    throw new UpstreamError(ErrorCode.Unauthenticated, 'The SMS service refused the credentials');
  throw new UpstreamError(
    ErrorCode.UpstreamError,
    `The SMS service reported a failure for ${operation} (success was not "1")`,
  );
}

// Matched loosely: docs/upstream-quirks.md "Refusals in the body".
const CREDENTIAL_REFUSAL =
  /credential|auth|token|sys_?id|password|log ?in|forbidden|access denied|permission|(invalid|unknown|disabled|suspended|locked|revoked|expired) account|account (not found|disabled|suspended|locked|revoked|expired)/i;

/** True when a `success` other than "1" came with an error about the credentials. */
export function refusesCredentials(error: unknown): boolean {
  return typeof error === 'string' && CREDENTIAL_REFUSAL.test(error);
}

export function parseOwnedNumbers(operation: UpstreamOperation, json: unknown): OwnedNumber[] {
  const object = successfulObject(operation, json);
  const data = object.data ?? [];
  if (!Array.isArray(data)) return new Reader(operation, object, '').fail('data', 'an array', data);
  return data.map((item, index) => {
    const r = new Reader(operation, item, `data[${index}].`);
    return {
      tid: r.text('tid'),
      number: r.text('number'),
      type: parseNumberType(r.textOr('type', '')),
      webhook: r.textOr('webhook', null),
    };
  });
}

/** A history page; `tid`, `number` and `messages` may be left out (docs/upstream-quirks.md). */
export function parseHistory(json: unknown, request: HistoryRequest): History {
  const object = successfulObject('smshistory', json);
  const r = new Reader('smshistory', object, '');
  const tid = r.textOr('tid', request.tid);
  // The documented key has a trailing space; the unspaced spelling is accepted should it be fixed.
  const requestedKey =
    HISTORY_REQUESTED_KEY in object ? HISTORY_REQUESTED_KEY : HISTORY_REQUESTED_KEY.trim();
  const mostRecentId = object.most_recent_msg_id;
  const rawMessages = object.messages ?? [];
  if (!Array.isArray(rawMessages)) r.fail('messages', 'an array', rawMessages);
  return {
    tid,
    number: r.textOr('number', request.number),
    requestedCount: r.integer(requestedKey),
    totalCount: r.integer('total_message_count'),
    createdAt: r.optionalTimestamp('created_date'),
    // 0, "" or absent: the number has no newest message.
    mostRecentMessageId:
      isNone(mostRecentId) || toInteger(mostRecentId) === 0
        ? null
        : r.integerId('most_recent_msg_id'),
    mostRecentAt: r.optionalTimestamp('most_recent_date'),
    optIn: parseYesNo(object.optin),
    messages: (rawMessages as unknown[]).map((item, index) =>
      parseMessageRecord(item, `messages[${index}].`, tid),
    ),
  };
}

/** A message, or (when the record cannot be read) the reason, kept in the record's place. */
function parseMessageRecord(item: unknown, at: string, historyTid: string): MessageRecord {
  try {
    return parseMessage(item, at, historyTid);
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    const rawId = isObject(item) ? item.message_id : null;
    const id = typeof rawId === 'string' && rawId !== '' ? rawId : null;
    return { unreadable: true, id, error };
  }
}

function parseMessage(item: unknown, at: string, historyTid: string): Message {
  const r = new Reader('smshistory', item, at);
  const mediaUrl = r.textOr('mms_url', null);
  return {
    id: r.text('message_id'),
    systemId: r.integerId('system_id'),
    sentAt: r.timestamp('GMTdate'),
    tid: r.textOr('tid', historyTid),
    phone: r.text('phone'),
    direction: parseDirection(r.textOr('direction', '')),
    body: r.textOr('body', ''),
    // An unreadable mms flag is inferred from the presence of media rather than failing the page.
    mms: parseYesNo(r.object.mms) ?? mediaUrl !== null,
    mediaUrl,
    status: parseStatus(r.textOr('status', '')),
  };
}
