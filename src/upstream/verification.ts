/**
 * What this copy knows about credentials: whether the service accepted or refused them lately,
 * by fingerprint (an HMAC of the pair), and the two names everything else uses for them:
 * - `fingerprint(c)`: the exact credential pair, which answers are scoped to (response cache keys);
 * - `account(c)`: the keyed hash of the sys_id alone, which everything kept per account is keyed by.
 *
 * Nothing that outlives a request (a subscription, a response-cache entry) is created for
 * credentials the service has not accepted recently. The traffic layer records every verdict the
 * service gives for free (any answered call is an acceptance, a refusal is a refusal); only when
 * nothing is known does `verify` make one cheap call (traffic.ts). Refusals are remembered too,
 * so a flood of invented credentials costs the service one call each per `refusedTtlMs` at most.
 * The memory is bounded (`maxEntries`, least recently used out first); forgetting means one more
 * verification call, never a wrong answer.
 */
import { LRUCache } from 'lru-cache';
import {
  accountId,
  credentialsHmac,
  fingerprintKey,
  type Credentials,
} from '../core/credentials.js';

export type Verdict = 'accepted' | 'refused' | 'unknown';

export interface CredentialMemoryOptions {
  /** The secret (GATEWAY_SECRET); this process's random key when null. */
  readonly secret?: string | null;
  /** How long an acceptance is trusted. @default 300000 (5 min) */
  readonly acceptedTtlMs?: number;
  /** How long a refusal is remembered. @default 60000 */
  readonly refusedTtlMs?: number;
  /** Credential pairs remembered at most. @default 20000 */
  readonly maxEntries?: number;
}

export class CredentialMemory {
  private readonly key: Buffer | string;
  private readonly verdicts: LRUCache<string, 'accepted' | 'refused'>;
  private readonly names = new WeakMap<
    Credentials,
    { readonly fingerprint: string; readonly account: string }
  >();
  private readonly acceptedTtlMs: number;
  private readonly refusedTtlMs: number;

  constructor(options: CredentialMemoryOptions = {}) {
    this.key = fingerprintKey(options.secret);
    this.acceptedTtlMs = options.acceptedTtlMs ?? 300_000;
    this.refusedTtlMs = options.refusedTtlMs ?? 60_000;
    this.verdicts = new LRUCache({ max: options.maxEntries ?? 20_000, ttlAutopurge: false });
  }

  /** Pairs remembered now (for tests and soak figures). */
  get size(): number {
    return this.verdicts.size;
  }

  /** The exact pair's name: HMAC of sys_id and token (base64url). */
  fingerprint(credentials: Credentials): string {
    return this.namesOf(credentials).fingerprint;
  }

  /** The account's name: keyed hash of the sys_id alone. */
  account(credentials: Credentials): string {
    return this.namesOf(credentials).account;
  }

  verdict(credentials: Credentials): Verdict {
    return this.verdictOf(this.fingerprint(credentials));
  }

  /** The verdict by fingerprint (the response cache knows only its keys). */
  verdictOf(fingerprint: string): Verdict {
    return this.verdicts.get(fingerprint) ?? 'unknown';
  }

  /** The service answered a call made with these credentials. */
  accepted(credentials: Credentials): void {
    const fingerprint = this.fingerprint(credentials);
    // Refreshing on every answer would cost an LRU write per call: once a minute is enough.
    const left = this.verdicts.getRemainingTTL(fingerprint);
    if (this.verdicts.get(fingerprint) === 'accepted' && left > this.acceptedTtlMs - 60_000) return;
    this.verdicts.set(fingerprint, 'accepted', { ttl: this.acceptedTtlMs });
  }

  /**
   * The service refused these credentials. A pair it accepted lately is only forgotten, not
   * marked refused: one call's 401 (a number the account may not read) must not refuse every
   * call of a working pair, and the next check asks the service again (a revoked token).
   */
  refused(credentials: Credentials): void {
    const fingerprint = this.fingerprint(credentials);
    if (this.verdicts.get(fingerprint) === 'accepted') this.verdicts.delete(fingerprint);
    else this.verdicts.set(fingerprint, 'refused', { ttl: this.refusedTtlMs });
  }

  private namesOf(credentials: Credentials): { fingerprint: string; account: string } {
    let names = this.names.get(credentials);
    if (!names) {
      names = {
        fingerprint: credentialsHmac(this.key, credentials),
        account: accountId(this.key, credentials.sysId),
      };
      this.names.set(credentials, names);
    }
    return names;
  }
}
