/**
 * The seal on what the gateway writes to Redis (src/redis/seal.ts): what it seals opens again,
 * with the current secret or the previous one, only where it was sealed for; altered bytes, a
 * value sealed elsewhere and an unknown secret open as null, never a throw.
 */
import { describe, expect, it } from 'vitest';
import { createSeal } from '../../src/redis/seal.js';

const CURRENT = 'seal-test-current-0123456789abcdef0123456789';
const PREVIOUS = 'seal-test-previous-0123456789abcdef012345678';
const WHERE = 'sms-gateway:live:v1:events:topic';
const PLAIN = '[{"kind":"message","message":{"tid":"T-1","phone":"15550000000","body":"héllo"}}]';

describe('createSeal', () => {
  it('opens what it sealed, and the sealed bytes show none of it', () => {
    const seal = createSeal({ current: CURRENT });
    const sealed = seal.seal(PLAIN, WHERE);
    expect(seal.open(sealed, WHERE)).toBe(PLAIN);
    const bytes = sealed.toString('latin1');
    for (const clear of ['T-1', '15550000000', 'llo', 'message'])
      expect(bytes).not.toContain(clear);
    // Version, 12-byte nonce, ciphertext as long as the text, 16-byte tag.
    expect(sealed.length).toBe(1 + 12 + Buffer.byteLength(PLAIN) + 16);
  });

  it('draws a new nonce for each value: the same text seals differently', () => {
    const seal = createSeal({ current: CURRENT });
    const nonces = new Set(
      Array.from({ length: 100 }, () => seal.seal(PLAIN, WHERE).subarray(1, 13).toString('hex')),
    );
    expect(nonces.size).toBe(100);
    expect(seal.seal('', WHERE)).not.toEqual(seal.seal('', WHERE));
    expect(seal.open(seal.seal('', WHERE), WHERE)).toBe('');
  });

  it('detects any altered byte, a cut value and a value moved to another key', () => {
    const seal = createSeal({ current: CURRENT });
    const sealed = seal.seal(PLAIN, WHERE);
    for (let i = 0; i < sealed.length; i += 1) {
      const altered = Buffer.from(sealed);
      altered[i] = (altered[i] ?? 0) ^ 0x01;
      expect(seal.open(altered, WHERE), `byte ${i}`).toBeNull();
    }
    expect(seal.open(sealed.subarray(0, sealed.length - 1), WHERE)).toBeNull();
    expect(seal.open(sealed.subarray(0, 20), WHERE)).toBeNull();
    expect(seal.open(Buffer.alloc(0), WHERE)).toBeNull();
    expect(seal.open(sealed, `${WHERE}-other`)).toBeNull();
    // What an older version wrote in clear is not taken for a sealed value.
    expect(seal.open(Buffer.from(PLAIN), WHERE)).toBeNull();
  });

  it('opens what the previous secret sealed, and seals with the current one', () => {
    const before = createSeal({ current: PREVIOUS });
    const rotated = createSeal({ current: CURRENT, previous: PREVIOUS });
    const old = before.seal(PLAIN, WHERE);
    expect(rotated.open(old, WHERE)).toBe(PLAIN);
    // New values are the current secret's: a copy with only the current secret opens them,
    // one with only the previous secret does not.
    const fresh = rotated.seal(PLAIN, WHERE);
    expect(createSeal({ current: CURRENT }).open(fresh, WHERE)).toBe(PLAIN);
    expect(before.open(fresh, WHERE)).toBeNull();
    // Once the previous secret is dropped, what it sealed no longer opens.
    expect(createSeal({ current: CURRENT }).open(old, WHERE)).toBeNull();
  });

  it('refuses what an unknown secret sealed', () => {
    const stranger = createSeal({ current: 'seal-test-stranger-0123456789abcdef01234567' });
    const sealed = stranger.seal(PLAIN, WHERE);
    expect(createSeal({ current: CURRENT, previous: PREVIOUS }).open(sealed, WHERE)).toBeNull();
  });

  it("without a secret, seals under this process's own key", () => {
    const a = createSeal({ current: null });
    const b = createSeal({ current: null });
    expect(b.open(a.seal(PLAIN, WHERE), WHERE)).toBe(PLAIN);
    expect(createSeal({ current: CURRENT }).open(a.seal(PLAIN, WHERE), WHERE)).toBeNull();
  });
});
