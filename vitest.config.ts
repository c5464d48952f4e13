import { defineConfig } from 'vitest/config';

/**
 * Tests that measure this process's event-loop delay run after the rest, alone: another test file burning the
 * other core would show up in their histogram as a stall they did not cause.
 */
const TIMING_TESTS = ['test/hardening/big-inputs-event-loop.test.ts'];

/**
 * The HTTP surfaces' tests run a second time on the PostgreSQL adapter (PGlite in process, MNEMO_TEST_STORE):
 * createTestApp opens that store instead of the SQLite file. Not all of them: `npm test` must stay under 5 minutes
 * on two cores with room to spare, so this is each surface's happy and security files and one memory through every
 * surface. README (Test it) lists it. The errors files and the fuzz test also pass here but do not fit the budget:
 * `MNEMO_TEST_STORE=postgres npx vitest run --project suite test/g1/errors.test.ts test/hardening/fuzz.test.ts`.
 */
const POSTGRES_TESTS = [
  'test/g*/happy.test.ts', 'test/g*/security.test.ts',
  'test/cross/one-memory-every-surface.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: TIMING_TESTS, sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: {
          name: 'postgres', include: POSTGRES_TESTS, env: { MNEMO_TEST_STORE: 'postgres' },
          setupFiles: ['test/support/postgres-project.setup.ts'], sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'timing', include: TIMING_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
