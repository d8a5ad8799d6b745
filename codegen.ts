import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the operations the tests send: each `graphql(...)` call in test/ is
 * checked against schema.client.graphql (what a frontend would use) and its result and variables are typed.
 * The checked-in file, not the running gateway: introspection is off with NODE_ENV=production.
 * test/e2e/apollo-client.test.ts is left out: it writes its operations as a frontend copying the
 * README would (`gql` from @apollo/client) and runs them against the real gateway. (The docs'
 * recipes in support/recipes/ are outside test/, so they are not collected either.)
 */
const config: CodegenConfig = {
  schema: 'schema.client.graphql',
  documents: ['test/**/*.ts', '!test/gql/**', '!test/e2e/apollo-client.test.ts'],
  ignoreNoDocuments: true,
  generates: {
    'test/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        emitLegacyCommonJSImports: false,
        scalars: { DateTime: 'string' },
        enumsAsTypes: true,
      },
    },
  },
};

export default config;
