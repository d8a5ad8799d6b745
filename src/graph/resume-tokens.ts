/**
 * Resume tokens of live subscriptions: per watched number, the message cursor (cursors.ts) of the
 * last message delivered, joined by "~", so each part is signed and accepted by `Number.messages`.
 * A message's `seq` from the oldest never changes (the service adds at the head only). The
 * subscriptions' `after` (the head cursors of the lists a client shows) is read into the same
 * positions, so it resumes from a list exactly as a token resumes from an event.
 */
import type { Position, Positions } from '../live/subscription.js';
import type { CursorCodec, CursorOwner, CursorRefusal } from './cursors.js';

const SEPARATOR = '~';
/** The most numbers one subscription watches (parts a token has); fits default MAX_BODY_BYTES. */
export const MAX_WATCHED_NUMBERS = 500;
/** The id of "no message yet" (an empty history), as tokens have always written it. */
const NO_MESSAGE = '-';

/**
 * The edge cursor of the message at `seq` of `tid`'s history when it held `total` messages;
 * `owner` for an edge of a list (not for a token's parts, kept short).
 */
export function messageCursor(
  codec: CursorCodec,
  tid: string,
  message: { readonly seq: number; readonly total: number; readonly id: string },
  owner?: CursorOwner,
): string {
  const id = message.id === '' ? NO_MESSAGE : message.id;
  const offset = message.total - 1 - message.seq;
  return codec.encode({ tid, id, offset, total: message.total, ...(owner ? { owner } : {}) });
}

export function encodeResumeToken(codec: CursorCodec, positions: Positions): string {
  // Each at its own position then: offset 0 of a history of seq + 1 messages.
  return [...positions]
    .map(([tid, position]) => messageCursor(codec, tid, { ...position, total: position.seq + 1 }))
    .join(SEPARATOR);
}

/** Why `after` was refused: a refusal of the cursor itself, or one naming who it belongs to. */
export type AfterRefusal = CursorRefusal | 'two-for-one-number' | 'other-account';

/**
 * The positions `after` names: each cursor's message, per number (tids are checked against the
 * watched numbers by the caller). `sysId`: the caller's; a cursor issued to another account is
 * refused, one that names none (a resume token's part, an older gateway's cursor) is bound only
 * to its number. Null (a token's parts): cursors are not checked against an account.
 */
export function decodeAfterCursors(
  codec: CursorCodec,
  cursors: readonly string[],
  sysId: string | null,
): Positions | AfterRefusal {
  if (cursors.length > MAX_WATCHED_NUMBERS) return 'malformed';
  const positions = new Map<string, Position>();
  let unknownKey = false;
  for (const text of cursors) {
    const { cursor, refusal } = codec.decode(text);
    if (refusal === 'unknown-key') {
      unknownKey = true;
      continue;
    }
    if (cursor === null) return 'malformed';
    const seq = cursor.total - 1 - cursor.offset;
    if (seq < -1) return 'malformed';
    const owner = cursor.owner?.account;
    if (sysId !== null && owner && !codec.isAccountTag(owner, sysId)) return 'other-account';
    if (positions.has(cursor.tid)) return 'two-for-one-number';
    positions.set(cursor.tid, { seq, id: cursor.id === NO_MESSAGE ? '' : cursor.id });
  }
  return unknownKey ? 'unknown-key' : positions;
}

/** The positions a token names; else `malformed` if any part is, else `unknown-key`. */
export function decodeResumeToken(codec: CursorCodec, token: string): Positions | CursorRefusal {
  const read = token === '' ? 'malformed' : decodeAfterCursors(codec, token.split(SEPARATOR), null);
  // Two parts for one number: not a token this gateway issued.
  return read === 'two-for-one-number' || read === 'other-account' ? 'malformed' : read;
}
