/**
 * Resume tokens: the positions a subscription reached, signed, read back the same; anything this
 * gateway did not issue refused before any call, as malformed or as signed with a key it lost.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/graph/cursors.js';
import {
  decodeAfterCursors,
  decodeResumeToken,
  encodeResumeToken,
  MAX_WATCHED_NUMBERS,
  messageCursor,
} from '../../src/graph/resume-tokens.js';
import type { Position } from '../../src/live/subscription.js';

const KEY = 'resume-token-test-key-0123456789abcdef';
const codec = createCursorCodec(KEY);

const positions = fc
  .uniqueArray(
    fc.tuple(
      fc.stringMatching(/^[A-Za-z0-9]{1,12}$/),
      fc.record({
        seq: fc.integer({ min: -1, max: 1e6 }),
        id: fc.stringMatching(/^[a-z0-9]{0,10}$/),
      }),
    ),
    { selector: ([tid]) => tid, minLength: 1, maxLength: 20 },
  )
  .map((entries) => new Map<string, Position>(entries));

/** Positions in `count` numbers, with tids as long as a service's ids and 32-hex message ids. */
const numbers = (count: number): Map<string, Position> =>
  new Map(
    Array.from({ length: count }, (_, i) => [
      `PN${String(i).padStart(32, '0')}`,
      { seq: 100_000 + i, id: i.toString(16).padStart(32, '0') },
    ]),
  );

describe('resume tokens', () => {
  it('read back the positions they were made from, an empty history included', () => {
    fc.assert(
      fc.property(positions, (given) => {
        expect(decodeResumeToken(codec, encodeResumeToken(codec, given))).toEqual(given);
      }),
    );
  });

  it('name each position with a cursor that paging accepts for that number', () => {
    const cursor = messageCursor(codec, 'T1', { seq: 7, total: 10, id: 'm7' });
    expect(codec.decode(cursor).cursor).toMatchObject({
      tid: 'T1',
      id: 'm7',
      offset: 2,
      total: 10,
    });
  });

  it("refuse what this gateway did not issue: an edited part is malformed, another key's is unknown-key", () => {
    const token = encodeResumeToken(codec, new Map([['T1', { seq: 3, id: 'm3' }]]));
    expect(decodeResumeToken(codec, `${token.slice(0, -2)}xx`)).toMatch(/malformed|unknown-key/);
    expect(decodeResumeToken(codec, '')).toBe('malformed');
    expect(decodeResumeToken(codec, 'not-a-token')).toBe('malformed');
    const other = createCursorCodec('another-gateway-key-0123456789abcdef');
    const foreign = encodeResumeToken(other, new Map([['T1', { seq: 3, id: 'm3' }]]));
    expect(decodeResumeToken(codec, foreign)).toBe('unknown-key');
  });

  it('refuse a token naming a number twice, or more numbers than a subscription watches', () => {
    const one = encodeResumeToken(codec, new Map([['T1', { seq: 1, id: 'a' }]]));
    expect(decodeResumeToken(codec, `${one}~${one}`)).toBe('malformed');
    const many = numbers(MAX_WATCHED_NUMBERS + 1);
    expect(decodeResumeToken(codec, encodeResumeToken(codec, many))).toBe('malformed');
  });

  it('read back a token of the most numbers one subscription watches (live.ts refuses more)', () => {
    expect(MAX_WATCHED_NUMBERS).toBe(500);
    const most = numbers(MAX_WATCHED_NUMBERS);
    const token = encodeResumeToken(codec, most);
    expect(decodeResumeToken(codec, token)).toEqual(most);
    // Sent back as the `resumeToken` variable, it fits the default MAX_BODY_BYTES (100,000).
    expect(token.length).toBeLessThan(80_000);
  });

  it('still read a token signed with the previous key during a rotation', () => {
    const rotated = createCursorCodec('the-new-key-0123456789abcdef-0123', KEY);
    const token = encodeResumeToken(codec, new Map([['T1', { seq: 4, id: 'm4' }]]));
    expect(decodeResumeToken(rotated, token)).toEqual(new Map([['T1', { seq: 4, id: 'm4' }]]));
  });
});

describe('after: head cursors of lists, read as resume positions', () => {
  const tag = codec.accountTag('AC-1');
  const owner = { number: '15550000001', account: tag };

  it('name the position of the message each cursor names, as a token part would', () => {
    fc.assert(
      fc.property(positions, (at) => {
        // A page's cursors (with an owner), a live edge's, or a token's parts (without).
        const cursors = [...at].map(([tid, position], i) =>
          messageCursor(codec, tid, { ...position, total: position.seq + 1 + i }, owner),
        );
        const read = decodeAfterCursors(codec, cursors, 'AC-1');
        const token = decodeResumeToken(codec, encodeResumeToken(codec, at));
        expect(read).toEqual(token);
      }),
    );
  });

  it('refuse text that is not a cursor, two cursors of one number, and another account’s', () => {
    const head = codec.encode({ tid: 'T-A', id: 'm-9', offset: 0, total: 10, owner });
    const next = codec.encode({ tid: 'T-A', id: 'm-8', offset: 1, total: 10, owner });
    expect(decodeAfterCursors(codec, ['junk'], 'AC-1')).toBe('malformed');
    expect(decodeAfterCursors(codec, [head, next], 'AC-1')).toBe('two-for-one-number');
    expect(decodeAfterCursors(codec, [head], 'AC-2')).toBe('other-account');
    expect(decodeAfterCursors(createCursorCodec('another-key-0123456789'), [head], 'AC-1')).toBe(
      'unknown-key',
    );
    expect(decodeAfterCursors(codec, [], 'AC-1')).toEqual(new Map());
    // During a rotation, a head cursor of the previous key is still this account's.
    const rotated = createCursorCodec('next-key-0123456789abcdef', KEY);
    expect(decodeAfterCursors(rotated, [head], 'AC-1')).toEqual(
      new Map([['T-A', { seq: 9, id: 'm-9' }]]),
    );
    expect(decodeAfterCursors(rotated, [head], 'AC-2')).toBe('other-account');
  });
});
