import { beforeAll } from 'vitest';
import { startTestPostgres } from './test-store.ts';

// The `postgres` vitest project's setup file: its PGlite starts before a file's tests, within the hook timeout
// (test/support/test-store.ts). Its files run unisolated, so this starts it once per worker process.
beforeAll(async () => { await startTestPostgres(); });
