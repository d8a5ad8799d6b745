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
  type ExecutionArgs,
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
      const pending = jit.onExecute?.(payload);
      const source = payload.args.document.loc?.source;
      const hooks: OnExecuteHookResult<object> = {
        onExecuteDone({ result, setResult }) {
          const { errors, data } = result as ExecutionResult;
          const refused = errors && data == null ? coercionErrors(payload.args) : null;
          if (refused) return setResult({ errors: refused });
          const relocated = errors && source ? located(errors, source) : errors;
          const changed = relocated?.some((error, i) => error !== errors![i]);
          if (changed) setResult({ ...(result as ExecutionResult), errors: relocated! });
        },
      };
      return pending instanceof Promise ? pending.then(() => hooks) : hooks;
    },
  };
}

/**
 * graphql-jit words bad variables its own way, with `data: null` (so 200, not 400): a client got
 * another answer to the same request once its document was compiled. An answer without data is
 * checked again with graphql-js's coercion (only then: the compiled code coerces the rest), and
 * bad variables are answered as graphql-js answers them, marked 400 as yoga's executor marks a
 * request it cannot start; null when the variables are good (the errors are the operation's).
 */
function coercionErrors({ document, operationName, schema, variableValues }: ExecutionArgs) {
  const definitions = getOperationAST(document, operationName)?.variableDefinitions ?? [];
  if (definitions.length === 0) return null;
  const coerced = getVariableValues(schema, definitions, variableValues ?? {}, { maxErrors: 50 });
  return (
    coerced.errors?.map(
      (error) =>
        new GraphQLError(error.message, {
          nodes: error.nodes,
          extensions: { ...error.extensions, http: { status: 400 } },
        }),
    ) ?? null
  );
}
