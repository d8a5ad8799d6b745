/**
 * The APQ hash store in Redis (REDIS_URL), shared by every gateway copy: a client that
 * registered a query through one copy can send only its hash to any other. Loaded only when
 * REDIS_URL is set, with ioredis.
 *
 * Entries are hash -> query text: no account data, so no key needs the caller's credentials.
 * They expire after a day unless used again, so an abandoned client version does not keep its
 * queries for ever. Redis trouble costs a registration round-trip (the client resends the full
 * query), never a failed request.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { APQStore } from '@graphql-yoga/plugin-apq';

/** Every APQ key starts with this, so the gateway can share a Redis with other users. */
export const APQ_KEY_PREFIX = 'sms-gateway:apq:v1:';
const APQ_TTL_SECONDS = 24 * 60 * 60;
const COMMAND_TIMEOUT_MS = 500;

export interface RedisApqStore extends APQStore {
  close(): Promise<void>;
}

export function createRedisApqStore(url: URL, logger: Logger | false): RedisApqStore {
  const redis = new Redis(url.href, {
    // While disconnected, fail at once: the client then simply sends the whole query.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
  });
  // The URL may carry a password: only host and port are logged, and an outage only once.
  const where = { redis: `${url.hostname}:${url.port || '6379'}` };
  let healthy = true;
  const failed = (error: unknown): void => {
    if (!healthy) return;
    healthy = false;
    if (logger)
      logger.warn(
        where,
        `APQ store unavailable; clients resend whole queries meanwhile: ${error instanceof Error ? error.message : String(error)}`,
      );
  };
  redis.on('error', failed);
  redis.on('ready', () => {
    if (!healthy && logger) logger.info(where, 'APQ store: Redis reachable again');
    healthy = true;
  });
  return {
    async get(hash) {
      try {
        return await redis.getex(APQ_KEY_PREFIX + hash, 'EX', APQ_TTL_SECONDS);
      } catch (error) {
        failed(error);
        return null;
      }
    },
    async set(hash, query) {
      try {
        await redis.set(APQ_KEY_PREFIX + hash, query, 'EX', APQ_TTL_SECONDS);
      } catch (error) {
        failed(error);
      }
    },
    async close() {
      redis.disconnect();
    },
  };
}
