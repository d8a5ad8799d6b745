/**
 * Message cursors (src/graph/cursors.ts): round trip, tamper safety, per-key validity, the
 * previous key of a rotation, and malformed text told apart from a cursor of an unknown key.
 */
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/graph/cursors.js';

const cursor = { tid: 'TN-1', id: 'a'.repeat(32), offset: 7, total: 40 };
const KEY = 'k'.repeat(32);
const OLD_KEY = 'o'.repeat(32);
const MALFORMED = { cursor: null, refusal: 'malformed' };
const UNKNOWN_KEY = { cursor: null, refusal: 'unknown-key' };

describe('message cursors', () => {
  it('round-trips and is opaque', () => {
    const codec = createCursorCodec(KEY);
    const text = codec.encode(cursor);
    expect(codec.decode(text)).toEqual({ cursor });
    expect(text).not.toContain(cursor.id);
    expect(text).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('round-trips the cursor of a message the service sent without an id (located by position)', () => {
    const codec = createCursorCodec(KEY);
    const withoutId = { ...cursor, id: '' };
    expect(codec.decode(codec.encode(withoutId))).toEqual({ cursor: withoutId });
  });

  it('calls text that is not a cursor malformed', () => {
    const codec = createCursorCodec(KEY);
    const text = codec.encode(cursor);
    const [body, mac] = text.split('.') as [string, string];
    expect(codec.decode(`${body}.${mac.slice(1)}`)).toEqual(MALFORMED);
    expect(codec.decode(Buffer.from('7').toString('base64'))).toEqual(MALFORMED);
    expect(codec.decode('')).toEqual(MALFORMED);
    expect(codec.decode(`${text}.x`)).toEqual(MALFORMED);
    const notAPosition = Buffer.from('m1\nTN-1\na\n-1\n3').toString('base64url');
    expect(codec.decode(`${notAPosition}.${mac}`)).toEqual(MALFORMED);
    expect(codec.decode('x'.repeat(2000))).toEqual(MALFORMED);
  });

  it('calls a well-formed cursor that no key of its signed (another key, or edited) unknown-key', () => {
    const codec = createCursorCodec(KEY);
    const text = codec.encode(cursor);
    const [body, mac] = text.split('.') as [string, string];
    const edited = Buffer.from(
      Buffer.from(body, 'base64url').toString().replace('\n7\n', '\n8\n'),
    ).toString('base64url');
    expect(codec.decode(`${edited}.${mac}`)).toEqual(UNKNOWN_KEY);
    expect(createCursorCodec(OLD_KEY).decode(text)).toEqual(UNKNOWN_KEY);
    expect(createCursorCodec(null).decode(text)).toEqual(UNKNOWN_KEY);
  });

  it('is accepted by another codec with the same key (another gateway copy)', () => {
    expect(createCursorCodec(KEY).decode(createCursorCodec(KEY).encode(cursor))).toEqual({
      cursor,
    });
  });

  it('accepts cursors of the previous key during a rotation, and signs new ones with the current', () => {
    const before = createCursorCodec(OLD_KEY).encode(cursor);
    const rotated = createCursorCodec(KEY, OLD_KEY);
    expect(rotated.decode(before)).toEqual({ cursor });
    const after = rotated.encode(cursor);
    expect(after).not.toBe(before);
    // The current key alone (the rotation finished) accepts the new cursor, not the old one.
    expect(createCursorCodec(KEY).decode(after)).toEqual({ cursor });
    expect(createCursorCodec(KEY).decode(before)).toEqual(UNKNOWN_KEY);
  });

  it('carries its owner (the number behind the tid, an account tag) signed, beside cursors without one', () => {
    const codec = createCursorCodec(KEY);
    const owner = { number: '15125550101', account: codec.accountTag('AC-1') };
    const owned = { ...cursor, owner };
    const text = codec.encode(owned);
    expect(codec.decode(text)).toEqual({ cursor: owned });
    // Cursors issued before owners were written still decode, without one.
    expect(codec.decode(codec.encode(cursor))).toEqual({ cursor });
    // The owner cannot be changed: the signature covers it.
    const [body, mac] = text.split('.') as [string, string];
    const edited = Buffer.from(
      Buffer.from(body, 'base64url').toString().replace('15125550101', '15125550102'),
    ).toString('base64url');
    expect(codec.decode(`${edited}.${mac}`)).toEqual(UNKNOWN_KEY);
    // An owner with a part missing is not a cursor.
    const partial = Buffer.from(`m2\nTN-1\na\n7\n40\n15125550101`).toString('base64url');
    expect(codec.decode(`${partial}.${mac}`)).toEqual(MALFORMED);
  });

  it('tags accounts by sys_id under its key: one tag per account and key, no sys_id in it', () => {
    const codec = createCursorCodec(KEY);
    expect(codec.accountTag('AC-1')).toBe(createCursorCodec(KEY).accountTag('AC-1'));
    expect(codec.accountTag('AC-1')).not.toBe(codec.accountTag('AC-2'));
    expect(codec.accountTag('AC-1')).not.toBe(createCursorCodec(OLD_KEY).accountTag('AC-1'));
    expect(codec.accountTag('AC-1')).not.toContain('AC-1');
    // A rotation: tags of the previous key still name their account, no other.
    const rotated = createCursorCodec(OLD_KEY, KEY);
    expect(rotated.isAccountTag(codec.accountTag('AC-1'), 'AC-1')).toBe(true);
    expect(rotated.isAccountTag(rotated.accountTag('AC-1'), 'AC-1')).toBe(true);
    expect(rotated.isAccountTag(codec.accountTag('AC-1'), 'AC-2')).toBe(false);
    expect(codec.isAccountTag(rotated.accountTag('AC-1'), 'AC-1')).toBe(false);
  });
});
