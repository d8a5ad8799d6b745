import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Two suites (docs/development.md, "Tests"): `npm test` runs `unit`, everything in-process;
 * `npm run test:e2e` runs `e2e`, the tests that start the built process, a browser or a
 * federation router. CI runs both.
 */
export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (main) and ESM (module). Node loads the CommonJS build for the
    // libraries vitest leaves external (yoga, envelop); without this vite would hand our own
    // code the ESM build, and `instanceof GraphQLError` would fail across the two copies.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    testTimeout: 20_000,
    // Most of a test's time is waiting on loopback sockets, not CPU: two files at once even on a
    // 2-core machine (vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**'],
          // Test files share a worker's module cache instead of each importing yoga, Pothos and
          // the schema afresh (most of the suite's time otherwise). Safe because src/ keeps no
          // per-request state at module scope (only caches keyed by immutable documents), and
          // the one global a test installs (tracing's OpenTelemetry provider) it removes again.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // Tests that start the real process run dist/main.js, as `npm start` does.
          globalSetup: ['test/fixtures/build-dist.ts'],
        },
      },
    ],
  },
});
