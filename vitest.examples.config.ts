import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run test:examples`: the example apps, built first, driven in a browser. */
export default defineConfig({
  ...base,
  // Only the example tests (not merged with the base's include, which would run everything).
  test: { ...base.test, include: ['test/**/*.example.ts'], globalSetup: [] },
});
