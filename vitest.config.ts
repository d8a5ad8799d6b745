import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (main) and ESM (module). Node loads the CommonJS build for the
    // libraries vitest leaves external (yoga, envelop); without this vite would hand our own
    // code the ESM build, and `instanceof GraphQLError` would fail across the two copies.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that start the real process run dist/main.js, as `npm start` does.
    globalSetup: ['test/fixtures/build-dist.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
