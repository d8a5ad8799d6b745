import { describe, expect, it } from 'vitest';
import { readCredentials } from '../../src/core/credentials.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const read = (headers: Record<string, string>) => readCredentials(new Headers(headers));

describe('readCredentials', () => {
  it('reads Authorization: Basic base64(sys_id:auth_token), splitting at the first colon', () => {
    expect(read({ authorization: `Basic ${b64('AC1:tok:en')}` })).toEqual({
      kind: 'present',
      credentials: { sysId: 'AC1', authToken: 'tok:en' },
    });
    expect(read({ authorization: `basic   ${b64('AC1:t')}` }).kind).toBe('present');
  });

  it('reads the X-Sys-Id / X-Auth-Token pair', () => {
    expect(read({ 'x-sys-id': 'AC1', 'x-auth-token': 'tok' })).toEqual({
      kind: 'present',
      credentials: { sysId: 'AC1', authToken: 'tok' },
    });
  });

  it('reports missing when neither style is sent', () => {
    expect(read({})).toEqual({ kind: 'missing' });
    expect(read({ authorization: '  ' })).toEqual({ kind: 'missing' });
  });

  it.each([
    ['Bearer scheme', { authorization: 'Bearer S3CR3T' }],
    ['not base64', { authorization: 'Basic S3CR3T%%%' }],
    ['no colon', { authorization: `Basic ${b64('S3CR3T')}` }],
    ['empty sys_id', { authorization: `Basic ${b64(':S3CR3T')}` }],
    ['empty token', { authorization: `Basic ${b64('S3CR3T:')}` }],
    ['control character', { authorization: `Basic ${b64('AC1:S3CR3T\n')}` }],
    ['over-long token', { authorization: `Basic ${b64(`AC1:S3CR3T${'x'.repeat(600)}`)}` }],
    ['sys id alone', { 'x-sys-id': 'S3CR3T' }],
    ['token alone', { 'x-auth-token': 'S3CR3T' }],
    ['empty pair', { 'x-sys-id': '', 'x-auth-token': 'S3CR3T' }],
    [
      'two different accounts',
      { authorization: `Basic ${b64('AC1:S3CR3T')}`, 'x-sys-id': 'AC2', 'x-auth-token': 'S3CR3T' },
    ],
  ])('reports malformed for %s, without the secret in the reason', (_name, headers) => {
    const result = read(headers);
    expect(result.kind).toBe('malformed');
    const reason = result.kind === 'malformed' ? result.reason : '';
    expect(reason.length).toBeGreaterThan(10);
    expect(reason).not.toMatch(/S3CR3T|UzNDUjNU/);
  });

  it('accepts both styles when they agree', () => {
    expect(
      read({ authorization: `Basic ${b64('AC1:tok')}`, 'x-sys-id': 'AC1', 'x-auth-token': 'tok' })
        .kind,
    ).toBe('present');
  });
});
