import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/support/slow-first-sequencer.ts';

/**
 * Tests that measure this process's event-loop delay run after the rest, alone: another test file burning the
 * other core would show up in their histogram as a stall they did not cause. One after the other in one process
 * (the `timing` project, unisolated like `suite`: a second process would import the app again while the other core
 * idles), the one nearest its bound first (test/support/slow-first-sequencer.ts).
 */
const TIMING_TESTS = ['test/hardening/big-inputs-event-loop.test.ts', 'test/streams/resume-replay.test.ts'];

/**
 * Every file of `suite` and `postgres` runs unisolated: the files of a worker share one process and so one import of
 * the app (importing it again for each file was a large share of the workers' time), and
 * test/support/leak-guard.setup.ts fails a file that leaves behind what would reach the next one (environment
 * variables, process listeners; servers are not checked: see test/support/leak-guard.setup.ts).
 *
 * Load shedding reads the event loop of the test process, which work left running by an earlier file would move: it
 * is the first file of the run, in a new process (test/support/slow-first-sequencer.ts, FIRST), rather than a process
 * of its own (the former `isolated` project) whose app import no other file used.
 */
const LOAD_SHEDDING_TEST = 'test/cross/load-shedding.test.ts';

/**
 * Every test that runs the HTTP stack runs a second time on the PostgreSQL adapter (PGlite with pgvector in process,
 * MNEMO_TEST_STORE=postgres): createTestApp opens that store instead of the SQLite file. Not isolated: the files of
 * a worker share one process and so one PGlite (each app gets its own schema), because starting PGlite per file
 * would double the time of `npm test`.
 */
const POSTGRES_TESTS = [
  'test/g*/*.test.ts', 'test/cross/*.test.ts', 'test/streams/*.test.ts', 'test/hardening/*.test.ts',
  'test/coordination/{two-nodes,redis-outage}.test.ts', 'test/webhooks/wiring.test.ts', 'test/unit/service-quotas.test.ts',
  'test/mcp/*.test.ts',
  'test/dashboard/*.test.ts',
];
/**
 * Tests of SQLite itself (rows it cannot read, a SQLite source to migrate from), tests whose CLI opens the store its
 * environment names (the data directory's SQLite file), and tests that open PostgreSQL themselves.
 */
const NOT_ON_POSTGRES = [
  'test/hardening/deep-stored-metadata.test.ts', 'test/cross/migrate.test.ts', 'test/cross/secrets-cli.test.ts',
  'test/cross/postgres-store.test.ts', 'test/cross/pglite-server.test.ts', 'test/cross/master-key-rotation.test.ts',
  // `mnemo mcp` is a separate process: it opens the store its environment names (the data directory's SQLite file).
  'test/mcp/stdio.test.ts',
  // The dashboard's look in Chromium (width at 375 and 1920 px, axe, focus, 404, favicon): the store does not change
  // the markup. Its actions in Chromium (browser.test.ts, manage-browser.test.ts) run on both stores.
  'test/dashboard/look.browser.test.ts',
  // Load shedding reads the event loop of the test process; in this project that process also runs PGlite (WASM, in
  // process) and other files unisolated, whose work moves the samples. Shedding involves no store.
  LOAD_SHEDDING_TEST,
  // Bodies over the limits are refused before they are read: what these requests do in the store is the key lookup
  // and the user.activity write of every authenticated request, and the one memory created afterwards is what every
  // other file of the project creates, all of which the project runs on PostgreSQL. A second run would spend the
  // suite's budget on HTTP behaviour that does not depend on the store.
  'test/cross/oversized-bodies.test.ts',
  // They open no store of the project's (MNEMO_TEST_STORE reaches only createTestApp): units of the stream code, and
  // the event hub over a SQLite file it opens itself. A second run would repeat the same tests.
  'test/streams/units.test.ts', 'test/streams/event-hub.test.ts',
  // The OpenAPI document is built from the routes' schemas, which no store changes; linting it starts a process.
  'test/cross/openapi.test.ts',
  // Runs both stores itself on one loaded model (loading the bundled model twice, once per project, cost seconds).
  'test/g1/paraphrase-quality.test.ts',
  // What it tests is the bundled model's queue (a search's query ahead of an ingest's texts), not the store.
  'test/g1/search-during-ingest.test.ts',
  // The route fuzz and the isolation property on PostgreSQL too are `npm run test:long`'s (MNEMO_TEST_LONG): in
  // `npm test` they run on SQLite only, which keeps the suite nearer its 5-minute budget (docs/testing.md).
  ...(process.env.MNEMO_TEST_LONG ? [] : ['test/hardening/fuzz.test.ts', 'test/hardening/isolation.property.test.ts']),
  // G5 (embeddings) stores nothing: its routes reach no repository but the key lookup and the request's user.activity
  // and metrics rows that every authenticated request writes, which every other file of the project runs on
  // PostgreSQL (key states are judged by the key service, not the store). `npm run test:long` runs it there too.
  ...(process.env.MNEMO_TEST_LONG ? [] : ['test/g5/*.test.ts']),
];

const ROOT = import.meta.dirname;

export default defineConfig({
  // `mnemo/client` and `mnemo/integrations/*` (package.json "exports") resolve to their sources, as Node does under
  // the `mnemo-source` condition: Vite does not resolve a package's imports of itself.
  resolve: {
    alias: [
      { find: /^mnemo\/client$/, replacement: `${ROOT}/src/client/index.ts` },
      { find: /^mnemo\/integrations\/([\w-]+)$/, replacement: `${ROOT}/integrations/$1/index.ts` },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A young generation of up to 3 × 64 MB per worker (V8's default semi-space is 16 MB here): the HTTP tests
    // allocate fast and short-lived, and fewer scavenges leave the workers more CPU for the tests.
    execArgv: ['--max-semi-space-size=64'],
    // Vitest's default is one worker fewer than the CPUs: one worker on the 2-core CI machine, every file in a row.
    // Two keep both cores busy (the main process mostly waits); a third worker's app import and PGlite cost more than
    // the idle time it would fill.
    maxWorkers: 2,
    // The slowest files start first, so that the two workers end together (test/support/slow-first-sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'suite', include: ['test/**/*.test.ts'], exclude: TIMING_TESTS, isolate: false,
          sequence: { groupOrder: 0 }, setupFiles: ['test/support/cpu-per-file.setup.ts', 'test/support/leak-guard.setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres', include: POSTGRES_TESTS, exclude: [...TIMING_TESTS, ...NOT_ON_POSTGRES],
          env: { MNEMO_TEST_STORE: 'postgres' }, isolate: false, sequence: { groupOrder: 0 },
          setupFiles: ['test/support/cpu-per-file.setup.ts', 'test/support/leak-guard.setup.ts', 'test/support/postgres-project.setup.ts'],
        },
      },
      // One worker: each timing file runs with no other test file beside it, the other timing files included.
      {
        extends: true,
        test: {
          name: 'timing', include: TIMING_TESTS, maxWorkers: 1, isolate: false, sequence: { groupOrder: 1 },
          setupFiles: ['test/support/cpu-per-file.setup.ts', 'test/support/leak-guard.setup.ts'],
        },
      },
    ],
  },
});
