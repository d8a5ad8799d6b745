/** Error masking for @defer/@stream parts: yoga masks `errors` but not `incremental[i].errors`. */
import type { GraphQLError } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';

/** `mask` is the gateway's own masking, applied (and logged) as yoga applies it to `errors`. */
export function incrementalErrorMasking(mask: (error: GraphQLError) => GraphQLError): Plugin {
  return {
    onExecute() {
      return {
        onExecuteDone(payload) {
          return handleStreamOrSingleExecutionResult(payload, ({ result, setResult }) => {
            const incremental = (
              result as { incremental?: readonly { readonly errors?: readonly GraphQLError[] }[] }
            ).incremental;
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
