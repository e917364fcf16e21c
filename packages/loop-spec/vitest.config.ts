import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'loop-spec', include: ['src/**/*.test.ts'], testTimeout: 30_000 },
});
