import { defineConfig } from 'vitest/config';

// `npm test` runs test/upstream/cold-burst.test.ts on its own after the rest: it measures how a
// burst is admitted at a vendor's pace, which other test files running beside it would distort.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
