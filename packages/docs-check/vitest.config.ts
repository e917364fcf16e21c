import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'docs-check', include: ['src/**/*.test.ts'], testTimeout: 120_000 },
});
