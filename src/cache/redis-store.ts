/**
 * The Redis answer store, shared by every copy: one key per answer, expiring with its fresh time
 * plus the stale-if-error window; the value, a one-line header and the answer's JSON, is sealed for
 * its key (src/redis/seal.ts). Redis trouble, or a value that does not open, costs a cache miss.
 */
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { openWarningOnce, type Seal } from '../redis/seal.js';
import type { AnswerStore, StoredAnswer } from './store.js';

const FAILED = Symbol('failed');

/**
 * Answers in Redis, sealed with `seal`; one that does not open is a miss, logged once.
 * `previousKeyOf`: where the previous release kept the same answer, in clear (docs/upgrading.md),
 * read when this key holds none; never written.
 */
export function redisAnswerStore(
  redis: RedisConnection,
  seal: Seal,
  logger: Logger | false = false,
  previousKeyOf: (key: string) => string | undefined = () => undefined,
): AnswerStore {
  const unopened = 'Response cache: an entry sealed under another secret, or altered, was a miss';
  const open = openWarningOnce(seal, logger, unopened);
  const previous = async (key: string): Promise<StoredAnswer | undefined> => {
    const where = previousKeyOf(key);
    if (where === undefined) return undefined;
    const raw = await redis.attempt('read', () => redis.client.get(where), null);
    return raw === null ? undefined : decode(raw);
  };
  return {
    async get(key) {
      const raw = await redis.attempt('read', () => redis.client.getBuffer(key), FAILED);
      // Absent here, not unreachable: a Redis that just failed is not asked a second time.
      if (raw === null) return previous(key);
      if (raw === FAILED) return undefined;
      const opened = open(raw, key);
      return opened ? decode(opened) : undefined;
    },
    async set(key, answer, keepMs) {
      const sealed = seal.seal(encode(answer), key);
      const write = () => redis.client.set(key, sealed, 'PX', Math.max(1, Math.ceil(keepMs)));
      await redis.attempt('write', write, undefined);
    },
  };
}

function encode(answer: StoredAnswer): string {
  // JSON never contains a raw newline, so the first one ends the header.
  return `${JSON.stringify({ storedAt: answer.storedAt, freshMs: answer.freshMs })}\n${answer.json}`;
}

/** Anything unreadable (another version's format, a hand-edited key) is simply not there. */
function decode(raw: string): StoredAnswer | undefined {
  const newline = raw.indexOf('\n');
  if (newline < 0) return undefined;
  try {
    const header = JSON.parse(raw.slice(0, newline)) as { storedAt?: unknown; freshMs?: unknown };
    const { storedAt, freshMs } = header;
    if (typeof storedAt !== 'number' || typeof freshMs !== 'number') return undefined;
    const json = raw.slice(newline + 1);
    return { json, bytes: Buffer.byteLength(json), storedAt, freshMs };
  } catch {
    return undefined;
  }
}
