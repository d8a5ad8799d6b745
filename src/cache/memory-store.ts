/**
 * The in-memory answer store: lru-cache bounds the bytes and expires entries; this adds fairness
 * between accounts, evicting from the largest holder first (docs/cache.md "Where entries live").
 */
import { LRUCache } from 'lru-cache';
import type { AnswerStore, StoredAnswer } from './store.js';

export interface MemoryStoreOptions {
  /** Budget for all answers, in bytes of their JSON plus a per-entry overhead. */
  readonly maxBytes: number;
  /** The account an entry's key belongs to (its keyed name). */
  readonly accountOf: (key: string) => string;
  /** Clock, for tests. @default Date.now */
  readonly now?: () => number;
}

/** An estimate of what an entry costs beyond its JSON and key: tiny answers are not free. */
export const ENTRY_OVERHEAD_BYTES = 400;

/** Expired entries still take room until lru-cache sees them: sweep at most this often when full. */
const PURGE_INTERVAL_MS = 1_000;

export class MemoryAnswerStore implements AnswerStore {
  private readonly lru: LRUCache<string, StoredAnswer>;
  /** Per account: its keys, least recently used first (a Map keeps insertion order), with their
   * sizes, and the bytes they hold in all. */
  private readonly byAccount = new Map<string, { keys: Map<string, number>; bytes: number }>();
  private readonly now: () => number;
  private lastPurge = 0;

  constructor(private readonly options: MemoryStoreOptions) {
    this.now = options.now ?? Date.now;
    this.lru = new LRUCache<string, StoredAnswer>({
      maxSize: options.maxBytes,
      sizeCalculation: (answer, key) => entrySize(key, answer),
      // Whatever removes an entry (eviction, expiry, overwrite, delete), the account pays less.
      dispose: (_answer, key) => this.forget(key),
      ...(options.now ? { perf: { now: options.now } } : {}),
    });
  }

  get(key: string): StoredAnswer | undefined {
    const answer = this.lru.get(key);
    if (answer) this.touch(key);
    return answer;
  }

  async set(key: string, answer: StoredAnswer, keepMs: number): Promise<void> {
    const size = entrySize(key, answer);
    if (size > this.lru.maxSize) return;
    this.makeRoom(key, size);
    this.lru.set(key, answer, { ttl: keepMs });
    // lru-cache refuses silently what it cannot hold; count only what it kept.
    if (this.lru.has(key)) this.remember(key, size);
  }

  /** Bytes held in all and per account: for tests and metrics. */
  usage(): { total: number; accounts: ReadonlyMap<string, number> } {
    const accounts = new Map([...this.byAccount].map(([account, held]) => [account, held.bytes]));
    return { total: this.lru.calculatedSize, accounts };
  }

  /** Evicts from the largest holder until `size` more bytes fit under the budget. */
  private makeRoom(key: string, size: number): void {
    const incoming = this.options.accountOf(key);
    const replaced = (): number => this.byAccount.get(incoming)?.keys.get(key) ?? 0;
    const fits = (): boolean => this.lru.calculatedSize - replaced() + size <= this.lru.maxSize;
    if (fits()) return;
    if (this.now() - this.lastPurge >= PURGE_INTERVAL_MS) {
      this.lastPurge = this.now();
      this.lru.purgeStale();
    }
    while (!fits()) {
      const victim = this.largestAccount(incoming, size - replaced());
      const oldest =
        victim === undefined ? undefined : this.byAccount.get(victim)?.keys.keys().next();
      if (!oldest || oldest.done) return; // nothing left to evict: lru-cache's own bound applies
      this.lru.delete(oldest.value);
    }
  }

  /** The account holding the most bytes, the incoming one counted with what it brings. */
  private largestAccount(incoming: string, adding: number): string | undefined {
    let largest: string | undefined;
    let most = -1;
    for (const [account, { bytes }] of this.byAccount) {
      const held = account === incoming ? bytes + adding : bytes;
      // On a tie the incoming account pays for its own answer.
      if (held > most || (held === most && account === incoming)) {
        largest = account;
        most = held;
      }
    }
    return largest;
  }

  private remember(key: string, size: number): void {
    const account = this.options.accountOf(key);
    let held = this.byAccount.get(account);
    if (!held) this.byAccount.set(account, (held = { keys: new Map(), bytes: 0 }));
    held.keys.set(key, size);
    held.bytes += size;
  }

  private forget(key: string): void {
    const account = this.options.accountOf(key);
    const held = this.byAccount.get(account);
    const size = held?.keys.get(key);
    if (!held || size === undefined) return;
    held.keys.delete(key);
    held.bytes -= size;
    if (held.keys.size === 0) this.byAccount.delete(account);
  }

  /** Moves `key` to its account's most recently used end. */
  private touch(key: string): void {
    const keys = this.byAccount.get(this.options.accountOf(key))?.keys;
    const size = keys?.get(key);
    if (!keys || size === undefined) return;
    keys.delete(key);
    keys.set(key, size);
  }
}

function entrySize(key: string, answer: StoredAnswer): number {
  return answer.bytes + key.length + ENTRY_OVERHEAD_BYTES;
}
