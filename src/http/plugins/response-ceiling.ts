/**
 * MAX_RESPONSE_BYTES, the answer's side (src/graph/response-budget.ts charges the lists): once
 * the ceiling is passed, every list after it fails with the request's one RESPONSE_TOO_LARGE
 * error, which the executor wraps per field (with its path). Thousands of such errors (29
 * aliases on 200 numbers) would be a large answer of their own, so they are sent as one: the
 * first, with `extensions.fieldsLeftOut` saying how many lists failed in all. The `null`s in
 * `data` show where each one was.
 */
import { GraphQLError } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../../core/errors.js';

function isTooLarge(error: GraphQLError): boolean {
  return error.extensions?.code === ErrorCode.ResponseTooLarge;
}

export function useResponseCeiling(): Plugin {
  return {
    onExecute: () => ({
      onExecuteDone: (payload) =>
        handleStreamOrSingleExecutionResult(payload, ({ result, setResult }) => {
          const errors = result.errors ?? [];
          const tooLarge = errors.filter(isTooLarge);
          const [first] = tooLarge;
          if (!first || tooLarge.length === 1) return;
          const one = new GraphQLError(first.message, {
            nodes: first.nodes,
            path: first.path,
            extensions: { ...first.extensions, fieldsLeftOut: tooLarge.length },
          });
          setResult({
            ...result,
            errors: errors.flatMap((error) =>
              error === first ? [one] : isTooLarge(error) ? [] : [error],
            ),
          });
        }),
    }),
  };
}
