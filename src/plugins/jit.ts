/**
 * graphql-jit: each distinct operation is compiled once into a plain function (cached against
 * yoga's cached document), and its result is serialised by a stringifier generated for that
 * operation's shape, instead of graphql-js walking the schema for every field of every request.
 * graphql-jit knows nothing of incremental delivery, so documents using @defer or @stream are
 * left to graphql-js (checked once per cached document).
 */
// First: graphql-jit's memoization caches are created when it loads (see jit-memoize.ts).
import './jit-memoize.js';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { BREAK, Kind, visit, type DocumentNode, type OperationDefinitionNode } from 'graphql';

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

/** Only queries: subscriptions, and operations the schema has no root for, are graphql-js's. */
function isQuery(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const chosen = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations[0];
  return chosen?.operation === 'query';
}

export function useJit(): ReturnType<typeof useGraphQlJit> {
  return useGraphQlJit(
    {},
    {
      // No `cache` option: compiled queries are kept by DocumentNode (a WeakMap), so they live
      // exactly as long as yoga's bounded document cache keeps the document
      // (src/document-cache.ts); a cache by text would keep them after their document is gone.
      enableIf: ({ document, operationName }) =>
        isQuery(document, operationName) && !isIncremental(document),
    },
  );
}
