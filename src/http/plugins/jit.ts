/** graphql-jit for queries from a document's second execution (compiling a one-off is waste);
 * @defer/@stream (unknown to graphql-jit) and very large documents stay on graphql-js. */
// First: graphql-jit's memoization caches are created when it loads (see jit-memoize.ts).
import './jit-memoize.js';
import type { OnExecuteHookResult, Plugin } from '@envelop/core';
import { useGraphQlJit } from '@envelop/graphql-jit';
import {
  BREAK,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type Source,
} from 'graphql';

const INCREMENTAL = new Set(['defer', 'stream']);
/** Compiled code grows with the selection (30 aliased histories: 2 MB): past this, graphql-js. */
export const MAX_JIT_FIELDS = 150;
const compilable = new WeakMap<DocumentNode, boolean>();
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

/**
 * graphql-jit's errors carry `locations` but no nodes, and yoga rebuilds an error from its nodes or
 * its source and positions: the answer lost them. Given the source and positions here.
 */
function located(errors: readonly GraphQLError[], source: Source): GraphQLError[] {
  let starts: number[] | undefined;
  return errors.map((error) => {
    if (error.nodes || !error.locations?.length) return error;
    starts ??= [0, ...Array.from(source.body.matchAll(BREAK_RE), (m) => m.index + m[0].length)];
    const positions = error.locations.map((at) => (starts![at.line - 1] ?? 0) + at.column - 1);
    const { path, originalError, extensions } = error;
    return new GraphQLError(error.message, { source, positions, path, originalError, extensions });
  });
}
const BREAK_RE = /\r\n|[\n\r]/g;

export function useJit(): Plugin {
  const jit = useGraphQlJit(
    {},
    {
      // No `cache` option: compiled queries are kept by DocumentNode (a WeakMap), as long as
      // src/http/document-cache.ts keeps the document; by text they would outlive it.
      enableIf: ({ document, operationName }) =>
        // Only queries: subscriptions, and operations the schema has no root for, are graphql-js's.
        getOperationAST(document, operationName)?.operation === 'query' &&
        isCompilable(document) &&
        runBefore(document),
    },
  );
  return {
    ...jit,
    onExecute(payload) {
      // graphql-jit words bad variables its own way, with `data: null` (so 200, not 400): a
      // client would get a different answer to the same request once its document was compiled.
      // Coerced as graphql-js does, and answered as it does, before the compiled code runs.
      const { document, operationName, schema, variableValues } = payload.args;
      if (seenOnce.has(document)) {
        const operation = getOperationAST(document, operationName);
        const definitions = operation?.variableDefinitions ?? [];
        if (operation?.operation === 'query' && definitions.length > 0 && isCompilable(document)) {
          const coerced = getVariableValues(schema, definitions, variableValues ?? {}, {
            maxErrors: 50,
          });
          if (coerced.errors) {
            // Marked 400 as yoga's executor marks a request it cannot start.
            const errors = coerced.errors.map(
              (error) =>
                new GraphQLError(error.message, {
                  nodes: error.nodes,
                  extensions: { ...error.extensions, http: { status: 400 } },
                }),
            );
            payload.setResultAndStopExecution({ errors });
            return undefined;
          }
        }
      }
      const pending = jit.onExecute?.(payload);
      const source = payload.args.document.loc?.source;
      const hooks: OnExecuteHookResult<object> = {
        onExecuteDone({ result, setResult }) {
          const { errors } = result as ExecutionResult;
          const relocated = errors && source ? located(errors, source) : errors;
          const changed = relocated?.some((error, i) => error !== errors![i]);
          if (changed) setResult({ ...(result as ExecutionResult), errors: relocated! });
        },
      };
      return pending instanceof Promise ? pending.then(() => hooks) : hooks;
    },
  };
}
