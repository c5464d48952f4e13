import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files known to take longest (measured on the 2-core machine; `project:path`, slowest first within a project;
 * browser, oversized-bodies and sqlite.storage added from the per-file times of a whole run on 2026-11-29; the other
 * Chromium files, 20-30 s each, after them).
 * Vitest orders a fresh clone's files by size, which put some of these last: one worker then ran a 30-40 s file alone
 * while the other sat idle. Starting them first lets the two workers end together. Files not listed keep vitest's own
 * order (cached durations when it has them, else size).
 */
const SLOW_FIRST = [
  'postgres:test/hardening/fuzz.test.ts',
  'postgres:test/g5/errors.test.ts',
  'postgres:test/hardening/isolation.property.test.ts',
  // The dashboard's actions in Chromium on PostgreSQL, one after the other so that the second file of a worker takes
  // the browser the first launched (test/dashboard/chromium.ts).
  'postgres:test/dashboard/browser.test.ts',
  'postgres:test/dashboard/manage-browser.test.ts',
  'postgres:test/g4/errors.test.ts',
  'postgres:test/g1/errors.test.ts',
  'postgres:test/g2/errors.test.ts',
  'postgres:test/mcp/http.test.ts',
  // Beside the first file (load shedding, which reads its event loop): a file that mostly waits on the servers it
  // spawns, rather than the bundled model's worker threads.
  'suite:test/e2e/durability.test.ts',
  'suite:test/e2e/server.test.ts',
  'suite:test/hardening/fuzz.test.ts',
  'suite:test/g1/paraphrase-quality.test.ts',
  'suite:test/embeddings/local.embedder.test.ts',
  'suite:test/e2e/two-nodes-postgres.test.ts',
  'suite:test/dashboard/browser.test.ts',
  'suite:test/dashboard/manage-browser.test.ts',
  'suite:test/dashboard/look.browser.test.ts',
  'suite:test/storage/postgres-socket.storage.test.ts',
  'suite:test/cross/oversized-bodies.test.ts',
  'suite:test/storage/sqlite.storage.test.ts',
  'suite:test/hardening/isolation.property.test.ts',
  'suite:test/g5/errors.test.ts',
  'suite:test/storage/postgres.storage.test.ts',
  'suite:test/g2/errors.test.ts',
  'suite:test/g4/errors.test.ts',
  'suite:test/storage/sqlite-vector-cache.test.ts',
  'suite:test/mcp/stdio.test.ts',
];

/**
 * The file that starts the run, before the slowest: load shedding reads the event loop of its process, so it runs
 * first in a new one, where no earlier file can have left work running (vitest.config.ts, LOAD_SHEDDING_TEST). The
 * first file of a run always gets a new process; the `suite` block comes first (PROJECT_ORDER) to make this one first.
 */
const FIRST = 'suite:test/cross/load-shedding.test.ts';

/**
 * The projects' blocks in this order (a project not listed keeps its place after these). Fixed rather than whatever
 * order vitest's own sort gave, so that FIRST is the run's first file. The `timing` project is a group of its own,
 * run after the others whatever its place here (its `sequence.groupOrder`).
 */
const PROJECT_ORDER = ['suite', 'postgres', 'timing'];

/** The order of the `timing` project's files, which run one after the other in one process: the one nearest its bound first. */
const TIMING_ORDER = ['timing:test/hardening/big-inputs-event-loop.test.ts', 'timing:test/streams/resume-replay.test.ts'];

const nameOf = (spec: TestSpecification): string =>
  `${spec.project.name}:${spec.moduleId.slice(spec.project.config.root.length + 1).replaceAll('\\', '/')}`;

const rank = (spec: TestSpecification): number => {
  const name = nameOf(spec);
  if (name === FIRST) return -1;
  const listed = [...SLOW_FIRST, ...TIMING_ORDER].indexOf(name);
  return listed === -1 ? SLOW_FIRST.length + TIMING_ORDER.length : listed;
};

/**
 * Keeps each project's files together (vitest's own order: projects one after the other) and puts the slowest first
 * within each. Together matters because a worker process is reused only for a next file of the same project: vitest
 * ends a worker when the file at the head of its queue belongs to another project, and the next file then pays for a
 * new process (importing the app again, and starting PGlite again: test/support/pglite.ts, workerPglite). Interleaving
 * the projects' slowest files, as this sequencer did before, started a new worker for most of them.
 */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projectOrder = [...new Set([...PROJECT_ORDER, ...sorted.map((s) => s.project.name)])];
    const block = (spec: TestSpecification) => projectOrder.indexOf(spec.project.name);
    // Array.prototype.sort is stable: the unlisted files keep the order vitest gave them.
    return sorted.sort((a, b) => block(a) - block(b) || rank(a) - rank(b));
  }
}
