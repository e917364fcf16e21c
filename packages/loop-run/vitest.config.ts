import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'loop-run', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30000 },
});
