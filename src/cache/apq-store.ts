/**
 * The APQ hash store in Redis, shared by every copy (docs/persisted-operations.md): hash -> query
 * text, sealed for its key. Redis trouble, or a value that does not open, costs a registration
 * round-trip, never a failed request.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { createSeal, openWarningOnce, type SealSecret } from '../redis/seal.js';
import type { APQStore } from '@graphql-yoga/plugin-apq';

/** Every APQ key starts with this. v2: sealed values, never read by v1 copies (clear text). */
export const APQ_KEY_PREFIX = 'sms-gateway:apq:v2:';
/**
 * The previous release's keys, its texts in clear (docs/upgrading.md): read on a v2 miss and carried
 * over sealed, never written, never kept alive (GET, not GETEX), so they are gone a day after the
 * last copy of it stops. A release after the next drops this.
 */
export const APQ_V1_KEY_PREFIX = 'sms-gateway:apq:v1:';
const APQ_TTL_SECONDS = 24 * 60 * 60;
const FAILED = Symbol('failed');

export type RedisApqStore = ReturnType<typeof createRedisApqStore>;

/** `secret` (config.secret) seals the query texts; `logger` says once that a value did not open. */
export function createRedisApqStore(
  connection: RedisConnection,
  options: { readonly secret: SealSecret; readonly logger?: Logger | false },
) {
  const seal = createSeal(options.secret);
  const unopened = 'APQ store: an entry sealed under another secret, or altered, was a miss';
  const open = openWarningOnce(seal, options.logger, unopened);
  const set = async (hash: string, query: string): Promise<void> => {
    const key = APQ_KEY_PREFIX + hash;
    const write = () => connection.client.set(key, seal.seal(query, key), 'EX', APQ_TTL_SECONDS);
    await connection.attempt('command', write, undefined);
  };
  // A v1 text is taken only if it is the text its hash names: nothing vouches for a clear value.
  const previous = async (hash: string): Promise<string | null> => {
    const read = () => connection.client.get(APQ_V1_KEY_PREFIX + hash);
    const text = await connection.attempt('command', read, null);
    if (text === null || createHash('sha256').update(text).digest('hex') !== hash) return null;
    await set(hash, text);
    return text;
  };
  return {
    async get(hash) {
      const key = APQ_KEY_PREFIX + hash;
      const read = () => connection.client.getexBuffer(key, 'EX', APQ_TTL_SECONDS);
      const sealed = await connection.attempt('command', read, FAILED);
      // Absent here, not unreachable: a Redis that just failed is not asked a second time.
      if (sealed === null) return previous(hash);
      return sealed === FAILED ? null : open(sealed, key);
    },
    set,
    // QUIT, not a cut: a registration on its way still lands.
    close: () => connection.close(),
  } satisfies APQStore & { close(): Promise<void> };
}
