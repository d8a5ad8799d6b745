/**
 * Automatic persisted queries (docs/persisted-operations.md), stored once validated and answered,
 * for callers `keepsFor` vouches for: invented credentials churn neither the store nor the heap.
 */
import { createHash } from 'node:crypto';
import { useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { ticketOf, type Ticket } from '../../traffic/ticket.js';
import type { PersistedPlugin } from './allow-list.js';

export type { APQStore };

const APQ_MEMORY_MAX_BYTES = 8 * 1024 * 1024;

interface ApqOptions {
  /** Told of each lookup by hash (hit or miss) and each document registered. */
  readonly onRequest?: (result: 'hit' | 'miss' | 'registered') => void;
  /** May this caller register a document? Asked once answered. @default every caller */
  readonly keepsFor?: (ticket: Ticket) => boolean;
}

/** A store that can also tell a hash's query at once (in memory), for the lane's choice of path. */
type PeekableStore = APQStore & { readonly peek?: (hash: string) => string | null };

/** This process's own store: hash -> query, bounded by the bytes of the queries. */
export function memoryApqStore(maxBytes = APQ_MEMORY_MAX_BYTES): PeekableStore {
  const entries = new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (query, hash) => Buffer.byteLength(query) + hash.length,
  });
  return {
    get: (hash) => entries.get(hash) ?? null,
    peek: (hash) => entries.peek(hash) ?? null,
    set: (hash, query) => void entries.set(hash, query),
  };
}

/** Not the plugin's WebCrypto default, which first copies the whole query into a new buffer. */
const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

export function apqPlugin(store?: PeekableStore | null, options: ApqOptions = {}): PersistedPlugin {
  const target = store ?? memoryApqStore();
  // What yoga's plugin sees: writes are held back until the document validated (below).
  const gated: APQStore = {
    get: async (hash) => {
      const query = await target.get(hash);
      options.onRequest?.(query == null ? 'miss' : 'hit');
      return query;
    },
    set: () => undefined,
  };
  const keepsFor = options.keepsFor ?? (() => true);
  // A request that sent a hash with its query is registering, on its ticket (ticket.ts).
  const recorder: Plugin = {
    onParams({ params, context }) {
      const hash: unknown = params.extensions?.persistedQuery?.sha256Hash;
      if (typeof hash === 'string' && typeof params.query === 'string') {
        ticketOf(context).registering = { hash, query: params.query };
      }
    },
  };
  // A hash alone, known or not here and now (Redis can only tell in onParams).
  const peek = target.peek;
  const persistedText = peek
    ? (params: GraphQLParams) => {
        const hash: unknown = params.extensions?.persistedQuery?.sha256Hash;
        return typeof hash === 'string' ? peek(hash) : undefined;
      }
    : undefined;
  return {
    persistedText,
    onPluginInit({ addPlugin }) {
      addPlugin(recorder);
      addPlugin(useAPQ({ store: gated, hash: sha256Hex }));
    },
    onValidate({ context }) {
      const registration = ticketOf(context).registering;
      if (!registration) return undefined;
      return ({ valid }) => {
        if (valid) registration.validated = true;
      };
    },
    onResponse({ serverContext }) {
      const ticket = ticketOf(serverContext);
      if (!ticket.registering?.validated) return undefined;
      const { hash, query } = ticket.registering;
      // Checked again (yoga's plugin did) so nothing but a valid document's true hash is written.
      if (!keepsFor(ticket) || sha256Hex(query) !== hash) return undefined;
      options.onRequest?.('registered');
      // Awaited before the answer goes out, so the client's next request (any copy) finds it.
      return Promise.resolve(target.set(hash, query)).catch(() => undefined);
    },
  };
}
