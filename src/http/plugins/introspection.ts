/**
 * Schema introspection refused (GRAPHIQL=off, the default with NODE_ENV=production, as Apollo
 * Server does): `__schema` and `__type` fail validation. `__typename` and the federation
 * `_service { sdl }` a router composes from are ordinary fields and stay answered.
 */
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export function useNoIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}
