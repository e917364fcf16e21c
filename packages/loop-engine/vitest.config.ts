import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'loop-engine', include: ['src/**/*.test.ts'], testTimeout: 30000 },
});
