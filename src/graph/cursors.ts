/**
 * Message cursors: opaque, HMAC-signed names of one message in one number's history. A cursor
 * carries the message id with the position and total count it had when issued, so the next
 * page can find the message again cheaply after new messages arrive at the head. The signature
 * makes a cursor this gateway did not issue (or one edited by hand) fail before any upstream
 * call. Copies of the gateway accept each other's cursors only when they share the key.
 *
 * Checking tells two failures apart: text that is not a cursor at all (`malformed`: a client
 * bug, BAD_USER_INPUT) and a well-formed cursor that no key of this gateway signed (`unknown-key`:
 * issued before a restart without GATEWAY_SECRET or before a rotation, RESYNC_REQUIRED; one
 * edited by hand looks the same, and is answered the same safe way).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fingerprintKey } from '../core/credentials.js';

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

/** Why a text was not accepted as a cursor. */
export type CursorRefusal = 'malformed' | 'unknown-key';

export type DecodedCursor =
  | { readonly cursor: MessageCursor; readonly refusal?: undefined }
  | { readonly cursor: null; readonly refusal: CursorRefusal };

export interface CursorCodec {
  /** Signed with the current key. */
  encode(cursor: MessageCursor): string;
  /** The cursor's contents when the current or the previous key signed it; else why not. */
  decode(text: string): DecodedCursor;
}

const VERSION = 'm1';
const MAC_BYTES = 16;
// Cursors are short-lived page tokens; anything much longer than a real one is not ours.
const MAX_CURSOR_LENGTH = 1024;

const MALFORMED: DecodedCursor = { cursor: null, refusal: 'malformed' };
const UNKNOWN_KEY: DecodedCursor = { cursor: null, refusal: 'unknown-key' };

/** A signer under the key derived from `secret`, so a cursor signature never doubles as a fingerprint. */
function signer(secret: string | Buffer): (payload: string) => Buffer {
  const key = createHmac('sha256', secret).update('message-cursor').digest();
  return (payload) => createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
}

/** The cursor a payload names, or null when it names none. */
function parse(payload: string): MessageCursor | null {
  const [version, tid, id, offset, total, rest] = payload.split('\n');
  if (version !== VERSION || rest !== undefined || !tid || !id) return null;
  if (!/^\d+$/.test(offset ?? '') || !/^\d+$/.test(total ?? '')) return null;
  const position = Number(offset);
  const count = Number(total);
  if (!Number.isSafeInteger(position) || !Number.isSafeInteger(count)) return null;
  return { tid, id, offset: position, total: count };
}

/**
 * `secret`: the gateway's secret (GATEWAY_SECRET) when copies must accept each other's cursors,
 * and cursors must outlive the process; null for this process's own random key.
 * `previous`: GATEWAY_SECRET_PREVIOUS, still accepted while clients move to the current one.
 */
export function createCursorCodec(
  secret: string | Buffer | null,
  previous: string | Buffer | null = null,
): CursorCodec {
  const sign = signer(fingerprintKey(secret));
  const verifiers = previous === null ? [sign] : [sign, signer(previous)];
  return {
    encode({ tid, id, offset, total }) {
      const payload = [VERSION, tid, id, offset, total].join('\n');
      return `${Buffer.from(payload).toString('base64url')}.${sign(payload).toString('base64url')}`;
    },
    decode(text) {
      if (text.length > MAX_CURSOR_LENGTH) return MALFORMED;
      const [body, mac, extra] = text.split('.');
      if (!body || !mac || extra !== undefined) return MALFORMED;
      const payload = Buffer.from(body, 'base64url').toString('utf8');
      const given = Buffer.from(mac, 'base64url');
      const cursor = parse(payload);
      if (cursor === null || given.length !== MAC_BYTES) return MALFORMED;
      for (const verify of verifiers) {
        if (timingSafeEqual(given, verify(payload))) return { cursor };
      }
      return UNKNOWN_KEY;
    },
  };
}
