import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Everything of the base's test settings but its two projects (unit, e2e): this is a third suite.
const { projects: _suites, ...shared } = base.test ?? {};

/** `npm run test:examples`: the example apps, built first, driven in a browser. */
export default defineConfig({
  ...base,
  test: { ...shared, include: ['test/**/*.example.ts'], globalSetup: [] },
});
