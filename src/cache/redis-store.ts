/**
 * The Redis answer store, shared by every gateway copy: one key per answer, expiring with the
 * answer's fresh time plus the stale-if-error window, its value a one-line header (when it was
 * stored, how long it is fresh) and the answer's JSON. Redis trouble costs a cache miss, never a
 * failed request or an unhandled rejection. Redis bounds its own memory (maxmemory, with an
 * eviction policy such as volatile-lru): CACHE_MAX_BYTES is for the in-memory store.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { AnswerStore, StoredAnswer } from './store.js';

/** A Redis command slower than this counts as failed: the request is answered without the cache. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

export interface RedisConnection {
  readonly client: Redis;
  /** Logs the first failure after a success, so an outage is one line, not one per request. */
  failed(what: string, error: unknown): void;
  succeeded(): void;
  ready(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export function redisAnswerStore(redis: RedisConnection): AnswerStore {
  return {
    async get(key) {
      try {
        const raw = await redis.client.get(key);
        redis.succeeded();
        return raw === null ? undefined : decode(raw);
      } catch (error) {
        redis.failed('read', error);
        return undefined;
      }
    },
    async set(key, answer, keepMs) {
      try {
        await redis.client.set(key, encode(answer), 'PX', Math.max(1, Math.ceil(keepMs)));
      } catch (error) {
        redis.failed('write', error);
      }
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

export function connectRedis(url: URL, logger: Logger | false): RedisConnection {
  // The URL may carry a password: only its host and port are ever logged.
  const where = { redis: `${url.hostname}:${url.port || '6379'}` };
  const client = new Redis(url.href, {
    // While disconnected, commands fail at once instead of queueing behind the reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
  });
  let healthy = true;
  let closing = false;
  const failed = (what: string, error: unknown): void => {
    if (!healthy || closing) return;
    healthy = false;
    const message = error instanceof Error ? error.message : String(error);
    if (logger)
      logger.warn(
        { ...where, what },
        `Response cache unavailable, answering without it: ${message}`,
      );
  };
  const succeeded = (): void => {
    if (!healthy && logger) logger.info(where, 'Response cache: Redis reachable again');
    healthy = true;
  };
  client.on('error', (error: unknown) => failed('connection', error));
  client.on('ready', succeeded);
  return {
    client,
    failed,
    succeeded,
    ready(timeoutMs) {
      if (client.status === 'ready') return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (value: boolean): void => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(value);
        };
        const onReady = (): void => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        client.on('ready', onReady);
      });
    },
    async close() {
      closing = true;
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}
