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
import type { Logger } from '../observability/logger.js';
import { connectRedis, type RedisConnection, type RedisTarget } from '../redis/connection.js';
import type { APQStore } from '@graphql-yoga/plugin-apq';

/** Every APQ key starts with this, so the gateway can share a Redis with other users. */
export const APQ_KEY_PREFIX = 'sms-gateway:apq:v1:';
const APQ_TTL_SECONDS = 24 * 60 * 60;
const COMMAND_TIMEOUT_MS = 500;

export interface RedisApqStore extends APQStore {
  close(): Promise<void>;
}

/** APQ's connection (src/redis: single server, Sentinel or Cluster), opened by src/app.ts. */
export function connectApqRedis(target: RedisTarget, logger: Logger | false): RedisConnection {
  return connectRedis(target, 'apq', {
    logger,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    messages: {
      down: 'APQ store unavailable; clients resend whole queries meanwhile',
      up: 'APQ store: Redis reachable again',
    },
  });
}

export function createRedisApqStore(connection: RedisConnection): RedisApqStore {
  const redis = connection.client;
  const failed = (error: unknown): void => connection.failed('command', error);
  return {
    async get(hash) {
      try {
        const query = await redis.getex(APQ_KEY_PREFIX + hash, 'EX', APQ_TTL_SECONDS);
        connection.succeeded();
        return query;
      } catch (error) {
        failed(error);
        return null;
      }
    },
    async set(hash, query) {
      try {
        await redis.set(APQ_KEY_PREFIX + hash, query, 'EX', APQ_TTL_SECONDS);
        connection.succeeded();
      } catch (error) {
        failed(error);
      }
    },
    // QUIT, not a cut: a registration on its way still lands.
    close: () => connection.close(),
  };
}
