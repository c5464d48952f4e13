import { defineConfig } from 'vitest/config';

/**
 * Tests that measure this process's event-loop delay run after the rest, alone: another test file burning the
 * other core would show up in their histogram as a stall they did not cause.
 */
const TIMING_TESTS = ['test/hardening/big-inputs-event-loop.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: TIMING_TESTS, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'timing', include: TIMING_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
