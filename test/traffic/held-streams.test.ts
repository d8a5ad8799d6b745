/** The count of streams held open on a copy (src/traffic/held-streams.ts), every transport's. */
import { describe, expect, it } from 'vitest';
import { HeldStreams } from '../../src/traffic/held-streams.js';

describe('HeldStreams', () => {
  it("holds up to an account's share and the copy's cap, the share checked first", () => {
    const held = new HeldStreams(3, 2);
    expect(typeof held.hold('a')).toBe('function');
    expect(typeof held.hold('a')).toBe('function');
    expect(held.hold('a')).toBe('account-full');
    expect(typeof held.hold('b')).toBe('function');
    expect(held.held).toBe(3);
    expect(held.hold('c')).toBe('copy-full');
    expect(held.hold('a')).toBe('account-full');
  });

  it('frees a slot once, however often its release is called', () => {
    const held = new HeldStreams(1, 1);
    const release = held.hold('a');
    if (typeof release !== 'function') throw new Error(`refused: ${release}`);
    release();
    release();
    expect(held.held).toBe(0);
    expect(typeof held.hold('b')).toBe('function');
    expect(held.hold('a')).toBe('copy-full');
  });

  it('tells a client why, short enough for a WebSocket close reason', () => {
    const held = new HeldStreams(1_000, 50);
    expect(held.message('account-full')).toBe(
      'This account already holds 50 streams on this gateway copy; close one first',
    );
    expect(held.message('copy-full')).toBe(
      'Too many streams on this gateway copy; try again later',
    );
    for (const refusal of ['account-full', 'copy-full'] as const) {
      expect(Buffer.byteLength(held.message(refusal))).toBeLessThanOrEqual(123);
    }
  });
});
