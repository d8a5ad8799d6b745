import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the operations the tests send: each `graphql(...)` call in test/ is
 * checked against schema.graphql and its result and variables are typed.
 */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.ts', '!test/gql/**'],
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
