/**
 * yoga's parsed documents by text (all else per document hangs off them in WeakMaps), bounded by
 * text (5 kB of aliases held 2 MB), kept from the second sighting so one-offs evict no one's.
 */
import { createHash } from 'node:crypto';
import type { DocumentNode } from 'graphql';
import type { YogaServerOptions } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/** Distinct documents kept: far more than the operations a set of clients sends. */
export const MAX_CACHED_DOCUMENTS = 500;
/** Their total text, in characters: about 25 alias-heavy documents (roughly 60 MB of heap). */
export const MAX_CACHED_DOCUMENT_TEXT = 128 * 1024;
/** Parse errors are remembered too (a client retrying a broken query), but few of them. */
const MAX_CACHED_PARSE_ERRORS = 100;
/** Documents seen once, remembered by fingerprint only (a few dozen bytes each). */
const MAX_SEEN_ONCE = 2_000;
/**
 * The latest documents parsed, whether kept or not: a request the query lane hands on to yoga
 * (invalid, a mutation) is parsed again there, and the same document object is what lets yoga's
 * validation cache answer instead of validating it a second time (468 ms, not 248, for 600
 * fields and an unknown one).
 */
const MAX_RECENT = 16;

type ParserCacheOptions = Exclude<
  NonNullable<YogaServerOptions<object, object>['parserAndValidationCache']>,
  boolean
>;

export function boundedDocumentCaches(): ParserCacheOptions {
  return {
    documentCache: keptFromSecondSighting(
      new LRUCache<string, DocumentNode>({
        max: MAX_CACHED_DOCUMENTS,
        maxSize: MAX_CACHED_DOCUMENT_TEXT,
        // A document bigger than the whole budget is parsed again each time, never kept.
        maxEntrySize: MAX_CACHED_DOCUMENT_TEXT,
        sizeCalculation: (_document, text) => Math.max(1, text.length),
      }),
    ),
    errorCache: new LRUCache<string, object>({
      max: MAX_CACHED_PARSE_ERRORS,
      maxSize: MAX_CACHED_DOCUMENT_TEXT,
      sizeCalculation: (_error, text) => Math.max(1, text.length),
    }),
    validationCache: true,
  };
}

type DocumentCache = NonNullable<ParserCacheOptions['documentCache']>;

/** yoga sets a document only after a miss: the first set of a text is remembered, the second kept. */
function keptFromSecondSighting(documents: LRUCache<string, DocumentNode>): DocumentCache {
  const seenOnce = new LRUCache<string, true>({ max: MAX_SEEN_ONCE });
  const recent = new LRUCache<string, DocumentNode>({
    max: MAX_RECENT,
    maxSize: MAX_CACHED_DOCUMENT_TEXT,
    sizeCalculation: (_document, text) => Math.max(1, text.length),
  });
  return {
    get: (text) => documents.get(text) ?? recent.get(text),
    set: (text, document) => {
      recent.set(text, document);
      // Not a security boundary: a collision only keeps a document one sighting early.
      const fingerprint = createHash('sha1').update(text).digest('base64');
      if (seenOnce.delete(fingerprint)) documents.set(text, document);
      else seenOnce.set(fingerprint, true);
    },
  };
}
