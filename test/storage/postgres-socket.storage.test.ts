import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { emptiedSchema, fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { describeStorageContract } from './storage.contract.ts';

// The same contract through the real `pg` driver and the code path real PostgreSQL takes (concurrent-connection
// executor, event appends serialised by the advisory lock), against PGlite served on loopback by pglite-socket to a
// pool of several connections (test/support/pglite-server.ts keeps their round trips apart).
let pglite: PGlite;
let database: FileDatabase | undefined;
let server: SharedPglite;
beforeAll(async () => {
  database = await fileDatabase();
  pglite = database.pglite;
  server = await servePglite(pglite);
}, 60_000);
afterAll(async () => {
  try {
    await server?.stop();
  } finally {
    await database?.release();
  }
});

/** Raw SQL on the shared PGlite (its search_path is the current contract schema), as someone with database access. */
const auditSql = {
  sql: async (statement: string, params: unknown[] = []) => {
    let i = 0;
    await pglite.query(statement.replace(/\?/g, () => `$${++i}`), params);
  },
  liftAppendOnlyGuard: async () => { await pglite.exec('ALTER TABLE audit_logs DISABLE TRIGGER USER'); },
};

// One migrated schema for the file, emptied before each test (support/pglite.ts): a fresh, empty store each time.
let emptied: (() => Promise<string>) | undefined;
describeStorageContract('postgres (pg driver over pglite-socket)', async () => {
  emptied ??= emptiedSchema(pglite);
  await emptied();
  const pool = new pg.Pool({ connectionString: server.url, max: 4 });
  return createPostgresStorage(pgPoolExecutor(pool));
}, {
  audit: auditSql,
  // Another node's store on the same database (its own pool and in-memory vector index).
  openSecond: async () => createPostgresStorage(pgPoolExecutor(new pg.Pool({ connectionString: server.url, max: 2 }))),
});
