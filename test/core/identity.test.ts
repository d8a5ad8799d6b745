import { describe, expect, it } from 'vitest';
import { Identities } from '../../src/core/identity.js';

const SECRET = 'a-secret-of-thirty-two-characters!';
const basic = (pair: string) => new Headers({ authorization: `Basic ${btoa(pair)}` });

describe('Identities', () => {
  it('reads the same headers once: the same object, its names computed once', () => {
    const identities = new Identities(SECRET);
    const first = identities.fromHeaders(basic('AC-kept:token-1'));
    expect(identities.fromHeaders(basic('AC-kept:token-1'))).toBe(first);
    expect(first).toMatchObject({ kind: 'present', credentials: { sysId: 'AC-kept' } });
    // Names of credentials already read are those of their identity.
    if (first.kind !== 'present') throw new Error('expected credentials');
    expect(identities.of(first.credentials)).toBe(first);
    // A pair in X- headers is another reading of the same names.
    const pair = identities.fromHeaders(
      new Headers({ 'x-sys-id': 'AC-kept', 'x-auth-token': 'token-1' }),
    );
    expect(pair).not.toBe(first);
    expect(pair).toEqual(first);
  });

  it('names an account by its sys_id and a pair by both parts, never by the credentials', () => {
    const identities = new Identities(SECRET);
    const one = identities.of({ sysId: 'AC-1', authToken: 'x' });
    const other = identities.of({ sysId: 'AC-1', authToken: 'y' });
    expect(one.account).toBe(other.account);
    expect(one.pair).not.toBe(other.pair);
    // NUL-separated: ("a:b", "c") and ("a", "b:c") are different pairs.
    expect(identities.of({ sysId: 'AC-a:b', authToken: 'c' }).pair).not.toBe(
      identities.of({ sysId: 'AC-a', authToken: 'b:c' }).pair,
    );
    expect(one.account).toMatch(/^[\w-]{22}$/);
    expect(`${one.account}${one.pair}`).not.toContain('AC-1');
    // The same secret names alike on every copy; another secret does not.
    expect(new Identities(SECRET).of({ sysId: 'AC-1', authToken: 'x' }).pair).toBe(one.pair);
    expect(
      new Identities('another-secret-of-32-characters!!').of({ sysId: 'AC-1', authToken: 'x' })
        .account,
    ).not.toBe(one.account);
  });

  it('says what is missing or malformed, without a secret in the reason', () => {
    const identities = new Identities(null);
    expect(identities.fromHeaders(new Headers())).toEqual({ kind: 'missing' });
    const malformed = identities.fromHeaders(new Headers({ 'x-sys-id': 'AC-only-s3cret' }));
    expect(malformed).toMatchObject({ kind: 'malformed' });
    expect(JSON.stringify(malformed)).not.toContain('s3cret');
  });
});
