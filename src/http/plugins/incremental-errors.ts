/**
 * Error masking for @defer/@stream parts. yoga masks the `errors` of each result, but the
 * errors of a deferred part live in `incremental[i].errors`, which it leaves alone: without
 * this plugin a deferred history that fails upstream would lose its `extensions.code`, and an
 * unexpected error there would reach the client unmasked.
 */
import type { GraphQLError } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';

interface IncrementalPart {
  readonly errors?: readonly GraphQLError[];
}

/** `mask` is the gateway's own masking, applied (and logged) as yoga applies it to `errors`. */
export function incrementalErrorMasking(mask: (error: GraphQLError) => GraphQLError): Plugin {
  return {
    onExecute() {
      return {
        onExecuteDone(payload) {
          return handleStreamOrSingleExecutionResult(payload, ({ result, setResult }) => {
            const incremental = (result as { incremental?: readonly IncrementalPart[] })
              .incremental;
            if (!incremental?.some((part) => part.errors?.length)) return;
            setResult({
              ...result,
              incremental: incremental.map((part) =>
                part.errors ? { ...part, errors: part.errors.map(mask) } : part,
              ),
            } as typeof result);
          });
        },
      };
    },
  };
}
