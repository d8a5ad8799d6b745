/** What the gateway keeps per distinct document is bounded by the documents' text. */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  boundedDocumentCaches,
  MAX_CACHED_DOCUMENT_TEXT,
  MAX_CACHED_DOCUMENTS,
} from '../../src/http/document-cache.js';

const query = (n: number, padding = 0) => `query Q${n} { __typename ${' '.repeat(padding)}}`;

/** As yoga does after each miss: parse, then set. */
function parsed(cache: ReturnType<typeof boundedDocumentCaches>['documentCache'], text: string) {
  cache?.set(text, parse(text));
}

describe('boundedDocumentCaches', () => {
  it('keeps a document from its second sighting, so one-off documents evict nothing', () => {
    const { documentCache } = boundedDocumentCaches();
    const mine = query(1);
    parsed(documentCache, mine);
    // Among the latest parsed only: gone once 16 others were parsed after it.
    for (let n = 300; n < 316; n++) parsed(documentCache, query(n));
    expect(documentCache?.get(mine)).toBeUndefined();
    parsed(documentCache, mine);
    expect(documentCache?.get(mine)).toBeDefined();
    // A flood of distinct documents, each nearly the whole budget, each seen once.
    for (let n = 100; n < 200; n++) parsed(documentCache, query(n, 95_000));
    expect(documentCache?.get(mine)).toBeDefined();
    expect(documentCache?.get(query(100, 95_000))).toBeUndefined();
  });

  it('gives a document parsed once back to the same request parsed again (the lane hands it on)', () => {
    const { documentCache } = boundedDocumentCaches();
    const text = query(7);
    const document = parse(text);
    documentCache?.set(text, document);
    // The same object: yoga's validation cache is keyed by it, so validation runs once.
    expect(documentCache?.get(text)).toBe(document);
  });

  it('keeps recent documents, dropping the oldest past the text budget', () => {
    const { documentCache } = boundedDocumentCaches();
    const size = 16 * 1024;
    const fit = Math.floor(MAX_CACHED_DOCUMENT_TEXT / size);
    for (let n = 0; n <= fit; n++) {
      const text = query(n, size - query(n).length);
      parsed(documentCache, text);
      parsed(documentCache, text);
    }
    expect(documentCache?.get(query(0, size - query(0).length))).toBeUndefined();
    expect(documentCache?.get(query(fit, size - query(fit).length))).toBeDefined();
  });

  it('never keeps more than MAX_CACHED_DOCUMENTS, nor one bigger than the whole budget', () => {
    const { documentCache } = boundedDocumentCaches();
    for (let n = 0; n <= MAX_CACHED_DOCUMENTS; n++) {
      parsed(documentCache, query(n));
      parsed(documentCache, query(n));
    }
    expect(documentCache?.get(query(0))).toBeUndefined();
    expect(documentCache?.get(query(MAX_CACHED_DOCUMENTS))).toBeDefined();
    const huge = query(999_999, MAX_CACHED_DOCUMENT_TEXT);
    parsed(documentCache, huge);
    parsed(documentCache, huge);
    expect(documentCache?.get(huge)).toBeUndefined();
  });
});
