/** Refuses a mutation at validation: graphql-js 16 only finds out at execution. */
import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const knownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    const schema = context.getSchema();
    if (schema.getRootType(node.operation)) return;
    context.reportError(
      new GraphQLError(
        `This gateway has no ${node.operation}s: the schema defines no ${node.operation} type. ` +
          `It offers queries${schema.getSubscriptionType() ? ' and subscriptions' : ''}.`,
        { nodes: node },
      ),
    );
  },
});

export function useKnownOperationTypes(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(knownOperationTypes);
    },
  };
}
