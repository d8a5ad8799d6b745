/**
 * The doctor's last guard: whatever form a service or an error text carries the credentials in,
 * none of it leaves the process.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED } from '../../src/doctor/redact.js';

/** Every form the redactor promises to catch, for a pair of secrets. */
function formsOf(sysId: string, authToken: string): string[] {
  const each = (secret: string) => [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ v: secret }).toString().slice(2),
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    JSON.stringify(secret).slice(1, -1),
  ];
  return [
    ...each(sysId),
    ...each(authToken),
    Buffer.from(`${sysId}:${authToken}`).toString('base64'),
  ];
}

const secret = fc.string({ minLength: 8, maxLength: 40, unit: 'grapheme-ascii' });

describe('createRedactor', () => {
  it('replaces the sys_id and token in every form they may be echoed in', () => {
    fc.assert(
      fc.property(secret, secret, fc.string(), fc.nat(12), (sysId, authToken, around, which) => {
        fc.pre(!sysId.includes(authToken) && !authToken.includes(sysId));
        const form = formsOf(sysId, authToken)[which] ?? sysId;
        const out = createRedactor([sysId, authToken])(`${around}<${form}>${around}`);
        expect(out).toContain(REDACTED);
        for (const f of formsOf(sysId, authToken)) expect(out).not.toContain(f);
      }),
    );
  });

  it('leaves a text without the secrets as it was', () => {
    const redact = createRedactor(['AC1234567890', 'token-abcdef']);
    const text = 'number 2125550100 not found (HTTP 404)';
    expect(redact(text)).toBe(text);
  });

  it('ignores values too short to be credentials, which would match ordinary words', () => {
    const redact = createRedactor(['abc', 'the']);
    expect(redact('the abc of it')).toBe('the abc of it');
  });

  it('replaces the Basic pair whole, not as pieces of its parts', () => {
    const basic = Buffer.from('SYS_LONG_ID:TOKEN_LONG_VALUE').toString('base64');
    const out = createRedactor(['SYS_LONG_ID', 'TOKEN_LONG_VALUE'])(
      `Authorization: Basic ${basic}`,
    );
    expect(out).toBe(`Authorization: Basic ${REDACTED}`);
  });
});
