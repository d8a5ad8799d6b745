/**
 * graphql-jit: each query is compiled once into a plain function with a generated stringifier,
 * instead of graphql-js walking the schema for every field. Documents using @defer or @stream
 * (unknown to graphql-jit) and very large ones stay on graphql-js. A document is compiled on its
 * second execution: compiling costs several executions' worth of CPU, waste for a one-off.
 */
// First: graphql-jit's memoization caches are created when it loads (see jit-memoize.ts).
import './jit-memoize.js';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { BREAK, Kind, visit, type DocumentNode, type OperationDefinitionNode } from 'graphql';

const INCREMENTAL = new Set(['defer', 'stream']);
/**
 * Compiled code grows with the selection (a 30-alias history document compiles to about 2 MB):
 * past this many fields a document runs on graphql-js, so large distinct documents cannot fill
 * the heap with compiled code.
 */
export const MAX_JIT_FIELDS = 150;
const compilable = new WeakMap<DocumentNode, boolean>();
/** Documents executed once so far (by yoga's cached DocumentNode). */
const seenOnce = new WeakSet<DocumentNode>();

/** False on a document's first execution, true from its second on. */
function runBefore(document: DocumentNode): boolean {
  if (seenOnce.has(document)) return true;
  seenOnce.add(document);
  return false;
}

/** No @defer/@stream and at most MAX_JIT_FIELDS fields (checked once per cached document). */
function isCompilable(document: DocumentNode): boolean {
  let verdict = compilable.get(document);
  if (verdict === undefined) {
    let fields = 0;
    verdict = true;
    visit(document, {
      Field() {
        fields += 1;
        if (fields <= MAX_JIT_FIELDS) return undefined;
        verdict = false;
        return BREAK;
      },
      Directive(node) {
        if (!INCREMENTAL.has(node.name.value)) return undefined;
        verdict = false;
        return BREAK;
      },
    });
    compilable.set(document, verdict);
  }
  return verdict;
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
      // No `cache` option: compiled queries are kept by DocumentNode (a WeakMap), as long as
      // src/http/document-cache.ts keeps the document; by text they would outlive it.
      enableIf: ({ document, operationName }) =>
        isQuery(document, operationName) && isCompilable(document) && runBefore(document),
    },
  );
}
