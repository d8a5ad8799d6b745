/**
 * Message cursors: opaque, HMAC-signed names of one message in one number's history. A cursor
 * carries the message id with the position and total count it had when issued, so the next
 * page can find the message again cheaply after new messages arrive at the head. The signature
 * makes a cursor this gateway did not issue (or one edited by hand) fail before any upstream
 * call. Copies of the gateway accept each other's cursors only when they share the key.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface MessageCursor {
  /** The owned number whose history the cursor points into. */
  readonly tid: string;
  /** The message it names. */
  readonly id: string;
  /** Its position (0 = newest) when the cursor was issued. */
  readonly offset: number;
  /** The history's total count when the cursor was issued. */
  readonly total: number;
}

export interface CursorCodec {
  encode(cursor: MessageCursor): string;
  /** The cursor's contents, or null when this gateway (with this key) did not issue it. */
  decode(text: string): MessageCursor | null;
}

const VERSION = 'm1';
const MAC_BYTES = 16;
// Cursors are short-lived page tokens; anything much longer than a real one is not ours.
const MAX_CURSOR_LENGTH = 1024;

/**
 * `secret`: the shared key (CACHE_HMAC_KEY) when copies must accept each other's cursors; null
 * for a random key of this process alone. A key of its own is derived from it, so a cursor
 * signature can never double as a cache fingerprint.
 */
export function createCursorCodec(secret: string | Buffer | null): CursorCodec {
  const key = createHmac('sha256', secret ?? randomBytes(32))
    .update('message-cursor')
    .digest();
  const sign = (payload: string) =>
    createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  return {
    encode({ tid, id, offset, total }) {
      const payload = [VERSION, tid, id, offset, total].join('\n');
      return `${Buffer.from(payload).toString('base64url')}.${sign(payload).toString('base64url')}`;
    },
    decode(text) {
      if (text.length > MAX_CURSOR_LENGTH) return null;
      const [body, mac, extra] = text.split('.');
      if (!body || !mac || extra !== undefined) return null;
      const payload = Buffer.from(body, 'base64url').toString('utf8');
      const given = Buffer.from(mac, 'base64url');
      const expected = sign(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      const [version, tid, id, offset, total, rest] = payload.split('\n');
      if (version !== VERSION || rest !== undefined || !tid || !id) return null;
      const position = Number(offset);
      const count = Number(total);
      if (!Number.isSafeInteger(position) || !Number.isSafeInteger(count)) return null;
      if (position < 0 || count < 0) return null;
      return { tid, id, offset: position, total: count };
    },
  };
}
