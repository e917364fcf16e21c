import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'loop-gate', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30000 },
});
