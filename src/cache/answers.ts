/**
 * The response cache's view of an answer store: answers younger than their TTL are hits;
 * older ones stay for the stale-if-error window, where only `stale()` reads them. One stored copy
 * serves both, under the same key, account and memory budget.
 */
import type { ExecutionResult } from 'graphql';
import type { AnswerStore, StoredAnswer } from './store.js';

export interface AnswerCacheOptions {
  /** How long past its TTL an answer is kept for stale-if-error; 0 keeps it only its TTL. */
  readonly staleIfErrorMs: number;
  /** Answers whose JSON is larger are not stored. */
  readonly maxEntryBytes: number;
  /** Clock, for tests. @default Date.now */
  readonly now?: () => number;
}

export function createAnswerCache(store: AnswerStore, options: AnswerCacheOptions) {
  const now = options.now ?? Date.now;
  return {
    /** The answer under `key` while fresh. */
    fresh(key: string): ExecutionResult | undefined | Promise<ExecutionResult | undefined> {
      const fresh = (answer: StoredAnswer | undefined) =>
        !answer || now() - answer.storedAt >= answer.freshMs
          ? undefined
          : (JSON.parse(answer.json) as ExecutionResult);
      const answer = store.get(key);
      // A store in memory answers at once, so a miss costs no turn of the event loop.
      return answer instanceof Promise ? answer.then(fresh) : fresh(answer);
    },
    /** Keeps an answer (its JSON) fresh for `ttl` ms, and for the stale-if-error window after. */
    async set(key: string, json: string, ttl: number): Promise<void> {
      const bytes = Buffer.byteLength(json);
      if (bytes > options.maxEntryBytes) return;
      const answer = { json, bytes, storedAt: now(), freshMs: ttl };
      await store.set(key, answer, ttl + options.staleIfErrorMs);
    },
    /** The stored answer under `key`, with its age in ms, if at most `staleIfErrorMs` past its TTL. */
    async stale(key: string): Promise<{ result: ExecutionResult; ageMs: number } | undefined> {
      if (options.staleIfErrorMs <= 0) return undefined;
      const answer = await store.get(key);
      if (!answer) return undefined;
      const ageMs = Math.max(0, now() - answer.storedAt);
      if (ageMs > answer.freshMs + options.staleIfErrorMs) return undefined;
      return { result: JSON.parse(answer.json) as ExecutionResult, ageMs };
    },
  };
}
