import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'qs-validate', include: ['src/**/*.test.ts'], testTimeout: 30_000 },
});
