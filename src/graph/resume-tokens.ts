/**
 * Resume tokens of live subscriptions: where a subscription stands in each number it watches,
 * as the message cursor (src/graph/cursors.ts) of the last message it delivered per number,
 * joined by "~". Signed by the cursor codec, so a token this gateway (or a copy sharing its key)
 * did not issue fails before any upstream call, and the part for a number is a cursor that
 * `Number.messages(after:/before:)` accepts. As with cursors, a token that is not one is
 * `malformed`, and a well-formed one signed with a key this gateway no longer has is `unknown-key`.
 *
 * A message's place in its history never changes (the service adds at the head only): its
 * `seq` counted from the oldest is `total - 1 - offset` of any cursor naming it.
 */
import type { Position, Positions } from '../live/subscription.js';
import type { CursorCodec, CursorRefusal } from './cursors.js';

const SEPARATOR = '~';
/**
 * The most numbers one subscription watches (src/graph/live.ts refuses more), so the most parts a
 * token of ours has: a token naming more is not ours. At 100-130 bytes per number, a token at the
 * bound (48-65 KB) still fits the default MAX_BODY_BYTES (100,000) when sent back as `resumeToken`.
 */
export const MAX_WATCHED_NUMBERS = 500;
/** The id of "no message yet" (an empty history): cursors need a non-empty id. */
const NO_MESSAGE = '-';

/** The edge cursor of the message at `seq` of `tid`'s history when it held `total` messages. */
export function messageCursor(
  codec: CursorCodec,
  tid: string,
  message: { readonly seq: number; readonly total: number; readonly id: string },
): string {
  const id = message.id === '' ? NO_MESSAGE : message.id;
  return codec.encode({ tid, id, offset: message.total - 1 - message.seq, total: message.total });
}

export function encodeResumeToken(codec: CursorCodec, positions: Positions): string {
  const parts: string[] = [];
  for (const [tid, position] of positions) {
    // Its own position then: offset 0 of a history of seq + 1 messages.
    parts.push(messageCursor(codec, tid, { ...position, total: position.seq + 1 }));
  }
  return parts.join(SEPARATOR);
}

/**
 * The positions a token names, or why it names none: `malformed` when any part is not a cursor
 * of a position, else `unknown-key` when any part's signature is not this gateway's.
 */
export function decodeResumeToken(codec: CursorCodec, token: string): Positions | CursorRefusal {
  const parts = token.split(SEPARATOR);
  if (token === '' || parts.length > MAX_WATCHED_NUMBERS) return 'malformed';
  const positions = new Map<string, Position>();
  let unknownKey = false;
  for (const part of parts) {
    const { cursor, refusal } = codec.decode(part);
    if (refusal === 'unknown-key') {
      unknownKey = true;
      continue;
    }
    if (cursor === null || positions.has(cursor.tid)) return 'malformed';
    const seq = cursor.total - 1 - cursor.offset;
    if (seq < -1) return 'malformed';
    positions.set(cursor.tid, { seq, id: cursor.id === NO_MESSAGE ? '' : cursor.id });
  }
  return unknownKey ? 'unknown-key' : positions;
}
