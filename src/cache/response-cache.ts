/**
 * The opt-in response cache (docs/cache.md), a yoga plugin keyed by the account,
 * the exact credential pair and the operation with its variables, so an answer only reaches the
 * credentials that produced it; only those the service accepted lately store one.
 */
import { createHash, createHmac } from 'node:crypto';
import { mergeIncrementalResult } from '@graphql-tools/utils';
import {
  getOperationAST,
  Kind,
  type ExecutionArgs,
  type ExecutionResult,
  type SelectionSetNode,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { createAnswerCache } from './answers.js';
import { MemoryAnswerStore } from './memory-store.js';
import { redisAnswerStore } from './redis-store.js';
import { isStale, markStale, serviceFailureCode, STALE_WARNING } from './stale.js';
import { DEFAULT_CACHE_MAX_BYTES, type ResponseCacheSettings } from '../config/config.js';
import { FIXED_CACHE_MAX_ENTRY_BYTES } from '../config/fixed.js';
import { fingerprintKey } from '../core/credentials.js';
import type { Logger } from '../observability/logger.js';
import { connectRedis, type RedisConnection } from '../redis/connection.js';
import { createSeal } from '../redis/seal.js';
import { CredentialMemory } from '../traffic/verification.js';
import { ticketOf } from '../traffic/ticket.js';

export type CacheStore = 'memory' | 'redis';

/** What a cache-hit or -miss hook is told: no account data, so it is safe as a metric label. */
export interface CacheEvent {
  readonly store: CacheStore;
  readonly operationName: string | null;
}

/** A stale answer served in place of a failed one (see docs/stale-if-error.md). */
export interface StaleEvent extends CacheEvent {
  /** The error code that made the fresh answer fail (the first one, if several). */
  readonly code: string;
  readonly ageMs: number;
}

export interface ResponseCacheOptions {
  /** Where Redis failures are logged; false for none. */
  readonly logger: Logger | false;
  readonly onCacheHit?: (event: CacheEvent) => void;
  /** A request with usable credentials not answered from the cache (others are neither). */
  readonly onCacheMiss?: (event: CacheEvent) => void;
  /** A failed answer replaced by a stale one (after its onCacheMiss). */
  readonly onStaleServed?: (event: StaleEvent) => void;
  /** The Redis connection to use with a Redis URL; else one is opened here. */
  readonly redis?: RedisConnection;
  /** Verdicts on credentials, shared with the upstream layer. @default a new one keyed by `hmacKey` */
  readonly credentials?: CredentialMemory;
}

/** The settings createResponseCache needs. `hmacKey`: GATEWAY_SECRET, or null for this process's key. */
export type ResponseCacheInput = Pick<ResponseCacheSettings, 'ttlMs' | 'redisUrl'> & {
  readonly hmacKey: string | null;
} & Partial<Pick<ResponseCacheSettings, 'staleIfErrorMs' | 'maxBytes' | 'maxEntryBytes'>>;

export type ResponseCache = NonNullable<ReturnType<typeof createResponseCache>>;

/** Every key starts with this, so the gateway can share a Redis: `v3:<account>:<pair>:<operation>`. */
export const CACHE_KEY_PREFIX = 'sms-gateway:response-cache:v3:';

/**
 * The previous release's key of each request lately asked, for its answers in clear under the same
 * prefix with an unkeyed operation hash (docs/upgrading.md). Read while it runs beside this one
 * (its entries last CACHE_TTL_MS plus the stale window); a release after the next drops it.
 */
const PREVIOUS_KEYS_KEPT = 1_000;

/** What the memo of operation hashes may hold: their texts' characters, and 64 each beside. */
const OPERATION_HASHES_BYTES = 1024 * 1024;

/** The account part of a key: `${CACHE_KEY_PREFIX}${account}:${pair}:${operation}`. */
function accountOf(key: string): string {
  return key.slice(CACHE_KEY_PREFIX.length, key.indexOf(':', CACHE_KEY_PREFIX.length));
}

/** The cache for `settings`, or null when it is off (CACHE_TTL_MS unset or 0). */
export function createResponseCache(settings: ResponseCacheInput, options: ResponseCacheOptions) {
  if (settings.ttlMs <= 0) return null;
  const verdicts = options.credentials ?? new CredentialMemory({ secret: settings.hmacKey });
  const store: CacheStore = settings.redisUrl ? 'redis' : 'memory';
  const redis = settings.redisUrl
    ? (options.redis ?? connectRedis(settings.redisUrl, 'cache', options))
    : null;
  const staleIfErrorMs = settings.staleIfErrorMs ?? 0;
  const memory = redis
    ? null
    : new MemoryAnswerStore({ maxBytes: settings.maxBytes ?? DEFAULT_CACHE_MAX_BYTES, accountOf });
  // Keys carry the current secret's HMACs, so the current secret alone opens what is read.
  const seal = createSeal({ current: settings.hmacKey });
  const previousKeys = redis ? new LRUCache<string, string>({ max: PREVIOUS_KEYS_KEPT }) : null;
  const previousKeyOf = (key: string): string | undefined => previousKeys?.get(key);
  const answers = createAnswerCache(
    redis
      ? redisAnswerStore(redis, seal, options.logger, previousKeyOf)
      : (memory as MemoryAnswerStore),
    { staleIfErrorMs, maxEntryBytes: settings.maxEntryBytes ?? FIXED_CACHE_MAX_ENTRY_BYTES },
  );

  // The operation's part of each key is keyed too: its variables may name a tid or a number.
  const operationKey = fingerprintKey(settings.hmacKey);
  // Every account asks the same few documents: each text's HMAC is worked out once (it was a
  // sixth of what the cache adds to a miss). Bounded by bytes, so long texts churn only this.
  const operationHashes = new LRUCache<string, string>({
    maxSize: OPERATION_HASHES_BYTES,
    maxEntrySize: OPERATION_HASHES_BYTES / 64,
    sizeCalculation: (_hash, text) => text.length + 64,
  });
  const operationHashOf = (text: string): string => {
    let hash = operationHashes.get(text);
    if (hash === undefined) {
      hash = operationHash(operationKey, text);
      operationHashes.set(text, hash);
    }
    return hash;
  };
  // What the cache knows of a request is kept on its ticket (ticket.ts).
  const recordOf = (context: unknown) => (ticketOf(context).cache ??= {});

  const callHook = <E>(hook: ((event: E) => void) | undefined, event: E): void => {
    try {
      hook?.(event);
    } catch (error) {
      // A failing metrics hook must not fail the answer it is counting.
      if (options.logger) options.logger.warn({ err: error }, 'Response cache hook failed');
    }
  };

  /**
   * Stores a whole answer, unless a stale one or with errors, or its credentials are not known
   * good; its JSON, or undefined if not stored.
   */
  const keep = (key: string, pair: string, result: ExecutionResult): string | undefined => {
    if (result.errors?.length || isStale(result) || verdicts.verdictOf(pair) !== 'accepted') {
      return undefined;
    }
    const json = JSON.stringify(result);
    // Not awaited: the answer does not wait on Redis (whose failures the store logs).
    void answers.set(key, json, settings.ttlMs);
    return json;
  };

  // Hand-written, not @graphql-yoga/plugin-response-cache: to invalidate by entity, which a
  // read-only schema never does, that plugin adds `__typename` to every selection set and then
  // copies each object of each answer to take it out again. With every request a miss it kept
  // 0.77x of the default's req/s (docs/performance.md); what is left is a key, a lookup, a store.
  const plugin: Plugin = {
    // After persisted operations' onParams, so a hash has become its text.
    onParams({ params, context, setResult }) {
      const record = recordOf(context);
      // A hit short-cuts the request before its context exists: the operation's name is kept here.
      record.operationName = params.operationName ?? null;
      const { identity } = ticketOf(context);
      // Without usable credentials a request is neither keyed nor cached; nor is one whose
      // variables no argument could take (keyable).
      if (identity.kind !== 'present' || !keyable(params.variables)) return;
      const session = `${identity.account}:${identity.pair}`;
      const text = operationText(params.query ?? '', params.operationName, params.variables);
      const key = `${CACHE_KEY_PREFIX}${session}:${operationHashOf(text)}`;
      record.key = key;
      previousKeys?.set(key, `${CACHE_KEY_PREFIX}${session}:${previousOperationHash(text)}`);
      const serve = (cached: ExecutionResult | undefined): void => {
        if (!cached) return;
        record.hit = true;
        setResult(cached);
      };
      const cached = answers.fresh(key);
      return cached instanceof Promise ? cached.then(serve) : serve(cached);
    },
    onExecute({ args }) {
      const ticket = ticketOf(args.contextValue);
      const key = ticket.cache?.key;
      // Schema introspection needs no account and changes with deployments: never cached.
      if (!key || ticket.identity.kind !== 'present' || asksForTheSchema(args)) return undefined;
      const { pair } = ticket.identity;
      return {
        onExecuteDone({ result, setResult }) {
          if (!isAsyncIterable(result)) {
            const json = keep(key, pair, result);
            // Sent as it was stored, serialised once (the second JSON.stringify of a page was a
            // tenth of what a miss added). Without errors nor `extensions.http`, what yoga would
            // write is this same JSON; a step after this that changes the answer spreads an
            // answer with errors, never this one.
            if (json !== undefined && !result.extensions?.http) {
              setResult({ ...result, stringify: () => json } as ExecutionResult);
            }
            return;
          }
          // @defer or @stream: the parts merged, kept once the last has come.
          const whole: ExecutionResult & { incremental?: unknown } = {};
          return {
            onNext({ result: part }) {
              if (!part) return;
              mergePart(whole, part);
              if (!('hasNext' in part) || part.hasNext === false) keep(key, pair, whole);
            },
          };
        },
      };
    },
    async onExecutionResult({ result, setResult, context }) {
      const record = ticketOf(context).cache;
      if (record?.key === undefined) return;
      const event: CacheEvent = { store, operationName: record.operationName ?? null };
      const hit = record.hit === true;
      callHook(hit ? options.onCacheHit : options.onCacheMiss, event);
      if (hit || staleIfErrorMs <= 0 || !result || isAsyncIterable(result)) return;
      const code = serviceFailureCode(result);
      if (code === null) return;
      const stale = await answers.stale(record.key);
      if (!stale) return;
      setResult(markStale(stale.result, stale.ageMs));
      record.stale = true;
      callHook(options.onStaleServed, { ...event, code, ageMs: stale.ageMs });
    },
    onResponse({ response, serverContext }) {
      if (ticketOf(serverContext).cache?.stale) response.headers.set('warning', STALE_WARNING);
    },
  };

  return {
    store,
    /** The yoga plugin; createGateway puts it right after persisted operations. */
    plugin,
    credentials: verdicts,
    /** True once the store can be used (at once for memory), false after `timeoutMs`. */
    ready: (timeoutMs: number) => (redis ? redis.ready(timeoutMs) : Promise.resolve(true)),
    /** Bytes the in-memory store holds (0 with Redis): sms_response_cache_bytes. */
    bytes: (): number => memory?.usage().total ?? 0,
    close: (): Promise<void> => (redis ? redis.close() : Promise.resolve()),
  };
}

/** What names an operation in a key: its text, its name and its variables, canonical. */
function operationText(
  documentString: string,
  operationName: string | null | undefined,
  variables: unknown,
): string {
  // The text JSON.stringify([document, name, canonical(variables)]) gave, keys as before.
  const head = JSON.stringify([documentString, operationName ?? null]).slice(0, -1);
  return `${head},${canonicalJson(variables ?? {})}]`;
}

/** Whether the operation asks for `__schema` or `__type` at its root, through its fragments too. */
function asksForTheSchema({ document, operationName }: ExecutionArgs): boolean {
  const operation = getOperationAST(document, operationName);
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition.selectionSet);
    }
  }
  // Validated before it runs, so spreads do not cycle; `seen` bounds the walk all the same.
  const seen = new Set<SelectionSetNode>();
  const asks = (set: SelectionSetNode | undefined): boolean => {
    if (!set || seen.has(set)) return false;
    seen.add(set);
    return set.selections.some((selection) => {
      if (selection.kind === Kind.FIELD) return SCHEMA_FIELDS.has(selection.name.value);
      if (selection.kind === Kind.INLINE_FRAGMENT) return asks(selection.selectionSet);
      return asks(fragments.get(selection.name.value));
    });
  };
  return asks(operation?.selectionSet);
}
const SCHEMA_FIELDS = new Set(['__schema', '__type']);

/** Merges one part of a @defer or @stream answer into the whole it builds (graphql-tools'). */
function mergePart(
  whole: ExecutionResult,
  part: ExecutionResult & { incremental?: unknown },
): void {
  if (part.data) whole.data = part.data;
  if (part.errors) whole.errors = [...(whole.errors ?? []), ...part.errors];
  if (part.extensions) whole.extensions = { ...whole.extensions, ...part.extensions };
  for (const patch of (part.incremental ?? []) as Parameters<
    typeof mergeIncrementalResult
  >[0]['incrementalResult'][]) {
    mergeIncrementalResult({ executionResult: whole, incrementalResult: patch });
  }
}

/** An HMAC, not a plain hash: a tid or a number in the variables could be guessed. */
function operationHash(key: Buffer | string, text: string): string {
  return createHmac('sha256', key).update('operation\u0000').update(text).digest('hex');
}

/** The previous release's operation part: the same text, hashed without a key. */
function previousOperationHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * No argument of the schema takes an input object, and its lists hold scalars, so variables
 * nested deeper than this are refused by graphql-js whatever they hold: such a request is neither
 * keyed nor cached (writing the key of variables nested 5,000 deep took a fifth of its CPU).
 */
const KEYED_DEPTH = 32;

/** Whether `value` is nested at most KEYED_DEPTH deep; stops as soon as it is not. */
function keyable(value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= KEYED_DEPTH) return false;
    for (const key in current) stack.push([(current as Record<string, unknown>)[key], depth + 1]);
  }
  return true;
}

/**
 * JSON with each object's keys sorted, so `{a, b}` and `{b, a}` make the same key. A loop with
 * its own stack, not recursion: variables nested 5,000 deep (a 10 kB body) overflowed the call
 * stack, a 500 for the request.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // A value still to write, or text (punctuation, a key) already decided; pushed in reverse, so
  // they pop in order.
  const stack: Array<{ readonly text: string } | { readonly value: unknown }> = [{ value }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if ('text' in next) {
      out.push(next.text);
      continue;
    }
    const current = next.value;
    if (current === null || typeof current !== 'object') {
      // As JSON.stringify writes an array's undefined (variables come from JSON: none else).
      out.push(JSON.stringify(current) ?? 'null');
    } else if (Array.isArray(current)) {
      stack.push({ text: ']' });
      for (let i = current.length - 1; i >= 0; i -= 1) {
        stack.push({ value: current[i] }, { text: i === 0 ? '' : ',' });
      }
      stack.push({ text: '[' });
    } else {
      const record = current as Record<string, unknown>;
      // In the order an object built from the sorted keys enumerates them (integer-like keys
      // first), as the recursive writer before this one keyed entries: stored keys stay valid.
      const sorted = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort();
      const keys = Object.keys(Object.fromEntries(sorted.map((key) => [key, 0])));
      stack.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i -= 1) {
        const key = keys[i] as string;
        stack.push(
          { value: record[key] },
          { text: `${i === 0 ? '' : ','}${JSON.stringify(key)}:` },
        );
      }
      stack.push({ text: '{' });
    }
  }
  return out.join('');
}
