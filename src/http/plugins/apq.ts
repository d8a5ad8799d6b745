/**
 * Automatic persisted queries (APQ), the default persisted-operations mode, as Apollo Client's
 * persisted-query link sends them: a hash first, the full query once when the gateway does not
 * know the hash yet. The hashes live in this process's memory, or, given a shared store
 * (REDIS_URL, src/cache/apq-store.ts), in Redis, so a hash registered through one copy works through
 * every other.
 */
import { useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import type { Plugin } from 'graphql-yoga';

export type { APQStore };

export function apqPlugin(store?: APQStore | null): Plugin {
  return store ? useAPQ({ store }) : useAPQ();
}
