/**
 * graphql-jit: each distinct operation is compiled once into a plain function (cached against
 * yoga's cached document), and its result is serialised by a stringifier generated for that
 * operation's shape, instead of graphql-js walking the schema for every field of every request.
 * graphql-jit knows nothing of incremental delivery, so documents using @defer or @stream are
 * left to graphql-js, as are very large documents (see MAX_JIT_FIELDS).
 *
 * A document is compiled on its second execution, not its first: compiling costs several
 * executions' worth of CPU and leaves generated code behind, which is waste for a document run
 * once (someone exploring in GraphiQL, or a client sending distinct documents to make the gateway
 * work). Every document a client sends again is compiled from then on.
 */
// First: graphql-jit's memoization caches are created when it loads (see jit-memoize.ts).
import './jit-memoize.js';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { BREAK, Kind, visit, type DocumentNode, type OperationDefinitionNode } from 'graphql';

const INCREMENTAL = new Set(['defer', 'stream']);
/**
 * Compiled code grows with the selection (each alias gets its own resolver and serializer code,
 * kept with its source text): a 30-alias history document compiles to about 2 MB. Past this
 * many fields a document runs on graphql-js, so a client sending many large distinct documents
 * cannot fill the heap with compiled code; everyday documents stay far below it.
 */
export const MAX_JIT_FIELDS = 150;
const compilable = new WeakMap<DocumentNode, boolean>();
/** Documents executed once so far (by yoga's cached DocumentNode, so they go with it). */
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
      // No `cache` option: compiled queries are kept by DocumentNode (a WeakMap), so they live
      // exactly as long as yoga's bounded document cache keeps the document
      // (src/http/document-cache.ts); a cache by text would keep them after their document is gone.
      enableIf: ({ document, operationName }) =>
        isQuery(document, operationName) && isCompilable(document) && runBefore(document),
    },
  );
}
