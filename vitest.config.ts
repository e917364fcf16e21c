import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*'],
    // the default output for people, then one plain `N passed, N failed, N skipped` line for CI
    reporters: ['default', './scripts/summary-reporter.mjs'],
  },
});
