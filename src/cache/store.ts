/** What the response cache keeps per answer, whatever the store (memory or Redis). */
export interface StoredAnswer {
  /** The execution result, serialised once: its size is known and no caller can mutate it. */
  readonly json: string;
  /** UTF-8 bytes of `json`: what CACHE_MAX_BYTES and FIXED_CACHE_MAX_ENTRY_BYTES count. */
  readonly bytes: number;
  /** When it was stored (ms since the epoch), so any copy can tell its age. */
  readonly storedAt: number;
  /** How long after storedAt it is served as fresh; kept longer only as a stale-if-error copy. */
  readonly freshMs: number;
}

/** A key-value store of answers that never throws: it answers undefined, or drops the answer. */
export interface AnswerStore {
  /** In memory, at once: a hit or a miss costs no turn of the event loop. */
  get(key: string): StoredAnswer | undefined | Promise<StoredAnswer | undefined>;
  /** Keeps `answer` under `key` for `keepMs` (fresh time plus the stale-if-error window). */
  set(key: string, answer: StoredAnswer, keepMs: number): Promise<void>;
}
