/** MAX_RESPONSE_BYTES: the RESPONSE_TOO_LARGE errors go out as one, counted in `fieldsLeftOut`. */
import { GraphQLError } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../../core/errors.js';

const isTooLarge = (error: GraphQLError) => error.extensions?.code === ErrorCode.ResponseTooLarge;

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
          // A compiled answer's error has locations and no nodes: jit.ts relocates it next.
          if (!first.nodes) Object.assign(one, { locations: first.locations });
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
