/**
 * Whether the service accepted or refused each credential pair lately. Every answered call is a
 * verdict for free (traffic.ts); refusals are kept too, so invented credentials cost one call per
 * `refusedTtlMs`. Bounded (LRU): forgetting costs one more call, never a wrong answer.
 */
import { LRUCache } from 'lru-cache';
import { Identities, type Named } from '../core/identity.js';
import type { Config } from '../config/config.js';

export type Verdict = 'accepted' | 'refused' | 'unknown';

export interface CredentialMemoryOptions {
  /** The secret (GATEWAY_SECRET) naming accounts and pairs; this process's key when null. */
  readonly secret?: string | null;
  /** How long an acceptance is trusted. @default 300000 (5 min) */
  readonly acceptedTtlMs?: number;
  /** How long a refusal is remembered. @default 60000 */
  readonly refusedTtlMs?: number;
  /** Credential pairs remembered at most. @default 20000 */
  readonly maxEntries?: number;
}

export class CredentialMemory {
  readonly identities: Identities;
  private readonly verdicts: LRUCache<string, 'accepted' | 'refused'>;
  private readonly acceptedTtlMs: number;
  private readonly refusedTtlMs: number;

  constructor(options: CredentialMemoryOptions = {}) {
    this.identities = new Identities(options.secret);
    this.acceptedTtlMs = options.acceptedTtlMs ?? 300_000;
    this.refusedTtlMs = options.refusedTtlMs ?? 60_000;
    this.verdicts = new LRUCache({ max: options.maxEntries ?? 20_000, ttlAutopurge: false });
  }

  /** Pairs remembered now (for tests and soak figures). */
  get size(): number {
    return this.verdicts.size;
  }

  /** The verdict by pair: a caller's named once (its identity), the response cache's keys. */
  verdictOf(pair: string): Verdict {
    return this.verdicts.get(pair) ?? 'unknown';
  }

  /** The service answered a call made with this pair. */
  accepted({ pair }: Pick<Named, 'pair'>): void {
    // Refreshing on every answer would cost an LRU write per call: once a minute is enough.
    const left = this.verdicts.getRemainingTTL(pair);
    if (this.verdicts.get(pair) === 'accepted' && left > this.acceptedTtlMs - 60_000) return;
    this.verdicts.set(pair, 'accepted', { ttl: this.acceptedTtlMs });
  }

  /**
   * The service refused these. A pair accepted lately is only forgotten: one call's 401 (a number
   * it may not read) must not refuse a working pair; the next check asks again (a revoked token).
   */
  refused({ pair }: Pick<Named, 'pair'>): void {
    if (this.verdicts.get(pair) === 'accepted') this.verdicts.delete(pair);
    else this.verdicts.set(pair, 'refused', { ttl: this.refusedTtlMs });
  }
}

/** The memory as configured: accounts named with GATEWAY_SECRET, the upstream's verdict TTLs. */
export function credentialMemory(config: Pick<Config, 'secret' | 'upstream'>): CredentialMemory {
  return new CredentialMemory({
    secret: config.secret.current,
    acceptedTtlMs: config.upstream.verifiedTtlMs,
    refusedTtlMs: config.upstream.refusedTtlMs,
  });
}
