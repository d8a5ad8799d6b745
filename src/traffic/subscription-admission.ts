/**
 * Who may hold a live subscription on this copy: only credentials the service accepted lately
 * (`verify`), at most `maxPerAccount` per account (the sys_id, so new tokens make no room) and
 * `maxTotal` on the copy, counted as held streams are.
 */
import { GraphQLError } from 'graphql';
import type { Credentials } from '../core/credentials.js';
import { ErrorCode } from '../core/errors.js';
import { HeldStreams } from './held-streams.js';

export const SUBSCRIPTION_LIMIT = ErrorCode.SubscriptionLimit;

export interface AdmissionOptions {
  readonly maxPerAccount: number;
  /** @default no cap per copy */
  readonly maxTotal?: number;
  /** The account credentials belong to (keyed hash of the sys_id). */
  readonly accountOf: (credentials: Credentials) => string;
  /** True when the service accepts the credentials. @default none: every caller counts as verified */
  readonly verify?: (credentials: Credentials) => Promise<boolean>;
}

export class SubscriptionAdmission {
  private readonly places: HeldStreams;

  constructor(private readonly options: AdmissionOptions) {
    this.places = new HeldStreams(options.maxTotal ?? Infinity, options.maxPerAccount);
  }

  get total(): number {
    return this.places.held;
  }

  /** Resolves when the service accepts the credentials; UNAUTHENTICATED when it refused them. */
  async verified(credentials: Credentials): Promise<void> {
    if (!this.options.verify || (await this.options.verify(credentials))) return;
    throw new GraphQLError(
      'The SMS service refused these credentials: a live subscription needs credentials it accepts',
      { extensions: { code: ErrorCode.Unauthenticated } },
    );
  }

  /** Takes a place for one subscription; throws SUBSCRIPTION_LIMIT when none is left. */
  hold(credentials: Credentials): () => void {
    const place = this.places.hold(this.options.accountOf(credentials));
    if (typeof place === 'function') return place;
    const { maxPerAccount, maxTotal } = this.options;
    throw new GraphQLError(
      place === 'account-full'
        ? `This account already holds ${maxPerAccount} live subscriptions, the most allowed; close one first`
        : `This gateway copy already holds ${maxTotal} live subscriptions, the most allowed; try again later`,
      { extensions: { code: SUBSCRIPTION_LIMIT } },
    );
  }
}
