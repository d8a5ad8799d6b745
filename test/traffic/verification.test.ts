/** What a copy remembers of credentials (src/traffic/verification.ts): how much, by what names. */
import { describe, expect, it } from 'vitest';
import { CredentialMemory } from '../../src/traffic/verification.js';

describe('CredentialMemory', () => {
  it('is bounded, names accounts by sys_id and pairs by both parts', () => {
    const memory = new CredentialMemory({
      secret: 'a-secret-of-thirty-two-characters!',
      maxEntries: 100,
    });
    for (let i = 0; i < 1_000; i += 1)
      memory.refused(memory.identities.of({ sysId: `AC-${i}`, authToken: 't' }));
    expect(memory.size).toBe(100);
    const a = { sysId: 'AC-a:b', authToken: 'c' };
    const b = { sysId: 'AC-a', authToken: 'b:c' };
    expect(memory.identities.of(a).pair).not.toBe(memory.identities.of(b).pair);
    expect(memory.identities.of({ sysId: 'AC-1', authToken: 'x' }).account).toBe(
      memory.identities.of({ sysId: 'AC-1', authToken: 'y' }).account,
    );
    // The same secret names an account alike on every copy; another secret does not.
    const other = new CredentialMemory({ secret: 'a-secret-of-thirty-two-characters!' });
    expect(other.identities.of(a).account).toBe(memory.identities.of(a).account);
    expect(
      new CredentialMemory({ secret: 'another-secret-of-32-characters!!' }).identities.of(a)
        .account,
    ).not.toBe(memory.identities.of(a).account);
    expect(memory.identities.of(a).account).toMatch(/^[\w-]{22}$/);
  });
});
