/**
 * graphql-jit: each distinct operation is compiled once into a plain function (cached against
 * yoga's cached document), and its result is serialised by a stringifier generated for that
 * operation's shape, instead of graphql-js walking the schema for every field of every request.
 * graphql-jit knows nothing of incremental delivery, so documents using @defer or @stream are
 * left to graphql-js (checked once per cached document).
 */
import { useGraphQlJit } from '@envelop/graphql-jit';
import { BREAK, visit, type DocumentNode } from 'graphql';

const INCREMENTAL = new Set(['defer', 'stream']);
const usesIncrementalDelivery = new WeakMap<DocumentNode, boolean>();

function isIncremental(document: DocumentNode): boolean {
  let found = usesIncrementalDelivery.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Directive(node) {
        if (!INCREMENTAL.has(node.name.value)) return undefined;
        found = true;
        return BREAK;
      },
    });
    usesIncrementalDelivery.set(document, found);
  }
  return found;
}

export function useJit(): ReturnType<typeof useGraphQlJit> {
  return useGraphQlJit({}, { enableIf: ({ document }) => !isIncremental(document) });
}
