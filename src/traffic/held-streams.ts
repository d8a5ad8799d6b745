/**
 * Streams held open on this copy, graphql-ws connections and graphql-sse streams together: one cap
 * for the copy and one share per account, so neither transport holds the cap twice, nor one
 * account every slot. Only credentials the service accepted hold one (the transports verify first).
 */
export type HoldRefusal = 'copy-full' | 'account-full';

export class HeldStreams {
  private total = 0;
  private readonly perAccount = new Map<string, number>();

  /** `maxTotal`: WS_MAX_CONNECTIONS; `maxPerAccount`: LIVE_MAX_SUBSCRIPTIONS_PER_ACCOUNT. */
  constructor(
    private readonly maxTotal: number,
    private readonly maxPerAccount: number,
  ) {}

  get held(): number {
    return this.total;
  }

  /** A slot for one stream of `account` (a release, idempotent), or why there is none. */
  hold(account: string): (() => void) | HoldRefusal {
    const own = this.perAccount.get(account) ?? 0;
    if (own >= this.maxPerAccount) return 'account-full';
    if (this.total >= this.maxTotal) return 'copy-full';
    this.total += 1;
    this.perAccount.set(account, own + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.perAccount.get(account) ?? 1) - 1;
      if (left > 0) this.perAccount.set(account, left);
      else this.perAccount.delete(account);
    };
  }

  /** What a client is told when it gets no slot (short enough for a WebSocket close reason). */
  message(refusal: HoldRefusal): string {
    return refusal === 'account-full'
      ? `This account already holds ${this.maxPerAccount} streams on this gateway copy; close one first`
      : 'Too many streams on this gateway copy; try again later';
  }
}
