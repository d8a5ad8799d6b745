/** Message cursors (src/graph/cursors.ts): round trip, tamper safety, per-key validity. */
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/graph/cursors.js';

const cursor = { tid: 'TN-1', id: 'a'.repeat(32), offset: 7, total: 40 };
const KEY = 'k'.repeat(32);

describe('message cursors', () => {
  it('round-trips and is opaque', () => {
    const codec = createCursorCodec(KEY);
    const text = codec.encode(cursor);
    expect(codec.decode(text)).toEqual(cursor);
    expect(text).not.toContain(cursor.id);
    expect(text).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('refuses cursors that were edited, invented or signed with another key', () => {
    const codec = createCursorCodec(KEY);
    const text = codec.encode(cursor);
    const [body, mac] = text.split('.') as [string, string];
    const edited = Buffer.from(
      Buffer.from(body, 'base64url').toString().replace('\n7\n', '\n8\n'),
    ).toString('base64url');
    expect(codec.decode(`${edited}.${mac}`)).toBeNull();
    expect(codec.decode(`${body}.${mac.slice(1)}`)).toBeNull();
    expect(codec.decode(Buffer.from('7').toString('base64'))).toBeNull();
    expect(codec.decode('')).toBeNull();
    expect(codec.decode(`${text}.x`)).toBeNull();
    expect(createCursorCodec('o'.repeat(32)).decode(text)).toBeNull();
    expect(createCursorCodec(null).decode(text)).toBeNull();
  });

  it('is accepted by another codec with the same key (another gateway copy)', () => {
    expect(createCursorCodec(KEY).decode(createCursorCodec(KEY).encode(cursor))).toEqual(cursor);
  });
});
