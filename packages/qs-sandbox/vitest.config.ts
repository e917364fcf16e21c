import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'qs-sandbox', include: ['src/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 30_000 },
});
