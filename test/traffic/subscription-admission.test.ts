/**
 * Subscription admission: verified credentials only, a cap per account that counts the sys_id
 * (not the token), and a cap per copy across every account.
 */
import { describe, expect, it } from 'vitest';
import { SubscriptionAdmission } from '../../src/traffic/subscription-admission.js';
import { CredentialMemory } from '../../src/traffic/verification.js';

const memory = new CredentialMemory();
const creds = (sysId: string, authToken = 'tok') => ({ sysId, authToken });

describe('SubscriptionAdmission', () => {
  it('caps an account by its sys_id, however many tokens it invents', () => {
    const admission = new SubscriptionAdmission({
      maxPerAccount: 3,
      accountOf: (c) => memory.identities.of(c).account,
    });
    for (let i = 0; i < 3; i += 1) admission.hold(creds('AC-1', `tok-${i}`));
    expect(() => admission.hold(creds('AC-1', 'tok-new'))).toThrow(
      'This account already holds 3 live subscriptions, the most allowed; close one first',
    );
    expect(() => admission.hold(creds('AC-2'))).not.toThrow();
  });

  it('caps the copy across accounts, and frees a place on release', () => {
    const admission = new SubscriptionAdmission({
      maxPerAccount: 50,
      maxTotal: 2,
      accountOf: (c) => memory.identities.of(c).account,
    });
    const release = admission.hold(creds('AC-1'));
    admission.hold(creds('AC-2'));
    expect(() => admission.hold(creds('AC-3'))).toThrow(
      'This gateway copy already holds 2 live subscriptions, the most allowed; try again later',
    );
    release();
    release(); // twice is once
    expect(admission.total).toBe(1);
    expect(() => admission.hold(creds('AC-3'))).not.toThrow();
  });

  it('admits only credentials the service accepts', async () => {
    const admission = new SubscriptionAdmission({
      maxPerAccount: 50,
      accountOf: (c) => memory.identities.of(c).account,
      verify: (c) => Promise.resolve(c.authToken === 'good'),
    });
    await expect(admission.verified(creds('AC-1', 'good'))).resolves.toBeUndefined();
    await expect(admission.verified(creds('AC-1', 'made-up'))).rejects.toMatchObject({
      extensions: { code: 'UNAUTHENTICATED' },
    });
  });
});
