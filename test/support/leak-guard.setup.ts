import { afterAll, beforeAll, expect } from 'vitest';
import { isProcessFixtureListener } from './process-fixture.ts';

/**
 * Setup file of the vitest projects whose files share one process (`suite`, `postgres`: `isolate: false`): a file
 * that leaves something behind would change the files that run after it in the same worker, so it fails instead.
 * Checked after the file's own afterAll hooks (a setup file's hooks are registered first, and vitest runs after-hooks
 * in reverse order): the environment variables and the process listeners (signal handlers, `exit`, unhandled errors)
 * are what they were before the file. Listening servers are not checked yet: after some files (test/cli/cli-errors,
 * test/webhooks/*) a TCP server handle is still listed once the file's own servers closed, not explained yet.
 * Listeners of a fixture kept for the whole process (test/support/process-fixture.ts) are not the file's.
 */
const WATCHED_EVENTS = ['SIGINT', 'SIGTERM', 'exit', 'beforeExit', 'uncaughtException', 'unhandledRejection', 'warning'] as const;

let env: Record<string, string | undefined>;
let listeners: Record<string, number>;

/** The process's listeners per watched event, but those of process fixtures. */
const listenerCounts = () => Object.fromEntries(WATCHED_EVENTS.map((e) => [e, (process as NodeJS.EventEmitter).listeners(e).filter((l) => !isProcessFixtureListener(l)).length]));

beforeAll(() => {
  env = { ...process.env };
  listeners = listenerCounts();
});

afterAll(() => {
  expect({ ...process.env }, 'environment variables changed by this file and not restored').toEqual(env);
  expect(listenerCounts(), 'process listeners added by this file and not removed').toEqual(listeners);
});
