/**
 * Automatic persisted queries (APQ), the default persisted-operations mode, as Apollo Client's
 * persisted-query link sends them: a hash first, the full query once when the gateway does not
 * know the hash yet. The hashes live in this process's memory, or, given a shared store
 * (REDIS_URL, src/cache/apq-store.ts), in Redis, so a hash registered through one copy works through
 * every other.
 *
 * A document is registered only once it has parsed and validated against the schema: yoga's
 * plugin checks the hash and hands the query on, and the store write waits for validation
 * (`onValidate`) and then for the answer, so nobody can fill the store with text that is not an
 * operation of this schema. It is kept only for a caller `keepsFor` vouches for (credentials the
 * service has accepted, as this copy remembers; the service is never asked just for this): a
 * flood of distinct documents without credentials, or under invented ones, is answered as usual
 * but stores nothing, so it churns neither the store nor the heap (each kept text outlives many
 * requests; evicted, it is old-generation garbage). Such a caller's next hash-only request is
 * told PersistedQueryNotFound and sends its query again, as the protocol expects. The memory
 * store is bounded by bytes (APQ_MEMORY_MAX_BYTES), least recently used out.
 */
import { createHash } from 'node:crypto';
import { useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { ticketOf, type Ticket } from '../../traffic/ticket.js';

export type { APQStore };

/** Bytes of query text the in-memory APQ store keeps at most. */
export const APQ_MEMORY_MAX_BYTES = 8 * 1024 * 1024;

export type ApqResult = 'hit' | 'miss' | 'registered';

export interface ApqOptions {
  /** Told of each lookup by hash (hit or miss) and each document registered. */
  readonly onRequest?: (result: ApqResult) => void;
  /**
   * Whether this request's caller may register a document, asked once it was answered (by then
   * any call it made told the gateway whether the service accepts its credentials).
   * @default every caller
   */
  readonly keepsFor?: (ticket: Ticket) => boolean;
}

/** This process's own store: hash -> query, bounded by the bytes of the queries. */
export function memoryApqStore(maxBytes = APQ_MEMORY_MAX_BYTES): APQStore {
  const entries = new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (query, hash) => Buffer.byteLength(query) + hash.length,
  });
  return {
    get: (hash) => entries.get(hash) ?? null,
    set: (hash, query) => {
      entries.set(hash, query);
    },
  };
}

/**
 * node:crypto's hash, not the plugin's default (WebCrypto): that one first encodes the whole query
 * into a new buffer, which for a large document is a second copy of it outside the V8 heap.
 */
const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

interface ApqParams {
  readonly extensions?: { readonly persistedQuery?: { readonly sha256Hash?: unknown } };
}

export function apqPlugin(store?: APQStore | null, options: ApqOptions = {}): Plugin {
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
  // Requests that sent a hash with its query (a registration), seen before yoga's plugin fills
  // the query in for a hash it knows.
  const registering = new WeakMap<Request, { hash: string; query: string }>();
  // Registrations whose document validated and matched its hash, kept once answered.
  const validated = new WeakMap<Request, { hash: string; query: string }>();
  const keepsFor = options.keepsFor ?? (() => true);
  const recorder: Plugin = {
    onParams({ params, request }) {
      const hash = (params as ApqParams).extensions?.persistedQuery?.sha256Hash;
      if (typeof hash === 'string' && typeof params.query === 'string') {
        registering.set(request, { hash, query: params.query });
      }
    },
  };
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(recorder);
      addPlugin(useAPQ({ store: gated, hash: sha256Hex }));
    },
    onValidate({ context }) {
      const request = (context as { request?: Request }).request;
      const registration = request && registering.get(request);
      if (!registration) return undefined;
      return ({ valid }) => {
        if (valid) validated.set(request, registration);
      };
    },
    onResponse({ request, serverContext }) {
      const registration = validated.get(request);
      if (!registration) return undefined;
      validated.delete(request);
      const { hash, query } = registration;
      // yoga's plugin already refused a query whose hash does not match; checked again here so
      // nothing but the true hash of a valid document is ever written.
      if (!keepsFor(ticketOf(serverContext)) || sha256Hex(query) !== hash) return undefined;
      options.onRequest?.('registered');
      // Awaited before the answer goes out, so the client's next request (to any copy sharing
      // the store) finds the hash.
      return Promise.resolve(target.set(hash, query)).catch(() => undefined);
    },
  };
}
