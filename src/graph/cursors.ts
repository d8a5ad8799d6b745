/**
 * Message cursors (docs/paging.md): HMAC-signed names of one message in one number's history, with
 * the position and total count it had when issued, so the next page finds it cheaply after new
 * arrivals. A well-formed one no key of this gateway signed is `unknown-key` (RESYNC_REQUIRED).
 * A page's cursors also carry its owner (the phone number behind the tid and a keyed tag of the
 * account), so the next page needs no lookup of the number; cursors without one (resume tokens,
 * and every cursor issued before owners were written) are still accepted.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fingerprintKey } from '../core/credentials.js';

export interface MessageCursor {
  readonly tid: string;
  /** The message it names. */
  readonly id: string;
  /** Its position (0 = newest) and the history's total count when the cursor was issued. */
  readonly offset: number;
  readonly total: number;
  /** Who the page was read for: absent from resume tokens and from cursors of older gateways. */
  readonly owner?: CursorOwner;
}

/** The number behind the tid, and `accountTag` of the account the cursor was issued to. */
export interface CursorOwner {
  readonly number: string;
  readonly account: string;
}

export type CursorRefusal = 'malformed' | 'unknown-key';

type DecodedCursor =
  | { readonly cursor: MessageCursor; readonly refusal?: undefined }
  | { readonly cursor: null; readonly refusal: CursorRefusal };

export interface CursorCodec {
  /** Signed with the current key. */
  encode(cursor: MessageCursor): string;
  /** The cursor's contents when the current or the previous key signed it; else why not. */
  decode(text: string): DecodedCursor;
  /**
   * A keyed tag of the account `sysId` names, for CursorOwner.account: the same on every copy
   * with this secret, and no way back to the sys_id from a cursor's readable payload.
   */
  accountTag(sysId: string): string;
  /** Whether `tag` is the account tag of `sysId` under the current or the previous key. */
  isAccountTag(tag: string, sysId: string): boolean;
}

const VERSION = 'm1';
/** With an owner: m1's fields, then the phone number and the account tag. */
const VERSION_OWNED = 'm2';
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

/** The account tagger under the key derived from `secret` (a tag never doubles as a MAC). */
function tagger(secret: string | Buffer): (sysId: string) => string {
  const key = createHmac('sha256', secret).update('cursor-account').digest();
  return (sysId) =>
    createHmac('sha256', key).update(sysId).digest().subarray(0, 12).toString('base64url');
}

/** The cursor a payload names, or null when it names none. */
function parse(payload: string): MessageCursor | null {
  const [version, tid, id, offset, total, ...rest] = payload.split('\n');
  const owned = version === VERSION_OWNED;
  if (version !== VERSION && !owned) return null;
  if (rest.length !== (owned ? 2 : 0)) return null;
  // An empty id names a message the service sent without one: its position alone locates it.
  if (!tid || id === undefined) return null;
  if (!/^\d+$/.test(offset ?? '') || !/^\d+$/.test(total ?? '')) return null;
  const position = Number(offset);
  const count = Number(total);
  if (!Number.isSafeInteger(position) || !Number.isSafeInteger(count)) return null;
  const cursor = { tid, id, offset: position, total: count };
  if (!owned) return cursor;
  const [number, account] = rest as [string, string];
  if (!number || !account) return null;
  return { ...cursor, owner: { number, account } };
}

/** `secret`: GATEWAY_SECRET, or null for this process's own key; `previous`: still accepted. */
export function createCursorCodec(
  secret: string | Buffer | null,
  previous: string | Buffer | null = null,
): CursorCodec {
  const key = fingerprintKey(secret);
  const sign = signer(key);
  const verifiers = previous === null ? [sign] : [sign, signer(previous)];
  const tag = tagger(key);
  // A cursor of the previous key carries that key's tag: still the same account's.
  const tags = previous === null ? [tag] : [tag, tagger(previous)];
  return {
    encode({ tid, id, offset, total, owner }) {
      const fields = [tid, id, offset, total];
      const payload = owner
        ? [VERSION_OWNED, ...fields, owner.number, owner.account].join('\n')
        : [VERSION, ...fields].join('\n');
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
    accountTag: tag,
    isAccountTag(given, sysId) {
      return tags.some((each) => each(sysId) === given);
    },
  };
}
