/**
 * Who is asking, read once: the credentials and the two keyed hashes everything else keys by,
 * `account` (the sys_id alone, so new tokens make no new account) and `pair` (sys_id and token).
 * Memoised by the headers' text: one Identity object, hashed once per distinct header set.
 */
import { LRUCache } from 'lru-cache';
import {
  accountId,
  credentialsHmac,
  fingerprintKey,
  readCredentials,
  type Credentials,
  type CredentialsResult,
} from './credentials.js';

export interface Named {
  readonly kind: 'present';
  readonly credentials: Credentials;
  readonly account: string;
  readonly pair: string;
}

export type Identity = Named | Exclude<CredentialsResult, { kind: 'present' }>;

/** Distinct credential header sets whose reading is kept. */
const MAX_KNOWN_HEADER_SETS = 2_000;

const MISSING: Identity = { kind: 'missing' };

export class Identities {
  private readonly key: Buffer | string;
  private readonly byHeaders = new LRUCache<string, Identity>({ max: MAX_KNOWN_HEADER_SETS });
  private readonly byCredentials = new WeakMap<Credentials, Named>();

  /** `secret`: GATEWAY_SECRET; null: this process's random key. */
  constructor(secret: string | null | undefined) {
    this.key = fingerprintKey(secret);
  }

  /** The identity `Authorization`, or `X-Sys-Id` with `X-Auth-Token`, carry. Never throws. */
  fromHeaders(headers: Pick<Headers, 'get'>): Identity {
    const basic = headers.get('authorization');
    const sysId = headers.get('x-sys-id');
    const token = headers.get('x-auth-token');
    if (basic === null && sysId === null && token === null) return MISSING;
    const text = `${basic ?? ''}\u0000${sysId ?? '\u0001'}\u0000${token ?? '\u0001'}`;
    let identity = this.byHeaders.get(text);
    if (identity === undefined) {
      const read = readCredentials(headers);
      identity = read.kind === 'present' ? this.of(read.credentials) : read;
      this.byHeaders.set(text, identity);
    }
    return identity;
  }

  /** The names of credentials already read (a subscription's, a call's). */
  of(credentials: Credentials): Named {
    let named = this.byCredentials.get(credentials);
    if (!named) {
      named = {
        kind: 'present',
        credentials,
        account: accountId(this.key, credentials.sysId),
        pair: credentialsHmac(this.key, credentials),
      };
      this.byCredentials.set(credentials, named);
    }
    return named;
  }
}
