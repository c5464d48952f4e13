import type { PGlite, Transaction } from '@electric-sql/pglite';
import { pgParams, type PgExecutor, type PgQueryable } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { emptySchema, workerPglite } from './pglite.ts';

/**
 * Which store createTestApp opens: `MNEMO_TEST_STORE=postgres` (the vitest project `postgres` sets it) runs the same
 * tests on the PostgreSQL adapter over an in-process PGlite; anything else, the SQLite file as the server ships.
 */
export const testStoreKind = (): 'sqlite' | 'postgres' => (process.env.MNEMO_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite');

// The worker's PGlite (test/support/pglite.ts, workerPglite: one per test process, started on first use): the
// `postgres` project runs its files unisolated, so they all share it. Each data directory gets its own schema,
// so an app reopened on the same directory (a restart) finds its data, and two apps open at once do not mix.
let shared: Promise<PGlite> | undefined;
const schemaOfDataFile = new Map<string, string>();
/** How many storages were opened on each data file's schema: one that only its own app opened can be recycled. */
const opensOfDataFile = new Map<string, number>();
/**
 * Migrated, emptied schemas of apps that closed for good, handed to the next new data directory: migrating a schema
 * takes about ten times as long as emptying one (test/support/pglite.ts, emptySchema), and the `postgres` project
 * opens hundreds of apps.
 */
const spareSchemas: string[] = [];
let schemasMade = 0;

/**
 * Starts this process's PGlite now (the `postgres` project's setup file does, in a hook of the hook timeout): started
 * by the first test that opens an app, its seconds of start-up would count against that test's own timeout.
 */
export async function startTestPostgres(): Promise<void> {
  shared ??= workerPglite();
  await shared;
}

/**
 * A PostgreSQL storage on the schema that stands for `dataFile`. PGlite is one session, so a session-wide
 * search_path would leak between apps open at the same time: every statement runs in its own transaction that
 * sets the schema locally first. Parameters go through the adapter's own pgParams, as in pgliteExecutor.
 */
export async function openTestPostgresStorage(dataFile: string): Promise<Storage> {
  shared ??= workerPglite();
  const db = await shared;
  let schema = schemaOfDataFile.get(dataFile);
  if (schema === undefined) {
    schema = spareSchemas.pop();
    if (schema === undefined) {
      schema = `app_${schemasMade++}`;
      await db.exec(`CREATE SCHEMA ${schema}`);
    }
    schemaOfDataFile.set(dataFile, schema);
  }
  opensOfDataFile.set(dataFile, (opensOfDataFile.get(dataFile) ?? 0) + 1);
  return createPostgresStorage(schemaExecutor(db, schema));
}

/**
 * The app of `dataFile` closed and its data directory is deleted: nothing will open it again. When that app was the
 * only one to open it, its schema is emptied and kept for the next new data directory; otherwise it is left as it is.
 */
export async function recycleTestPostgresStorage(dataFile: string): Promise<void> {
  const schema = schemaOfDataFile.get(dataFile);
  if (schema === undefined || shared === undefined || opensOfDataFile.get(dataFile) !== 1) return;
  schemaOfDataFile.delete(dataFile);
  opensOfDataFile.delete(dataFile);
  await emptySchema(await shared, schema);
  spareSchemas.push(schema);
}

function schemaExecutor(db: PGlite, schema: string): PgExecutor {
  const inSchema = async <T>(fn: (tx: Transaction) => Promise<T>): Promise<T> => db.transaction(async (tx) => {
    await tx.exec(`SET LOCAL search_path TO ${schema}, public`);
    return fn(tx);
  });
  const queryable = (tx: Transaction): PgQueryable => ({
    query: async <R>(sql: string, params: readonly unknown[] = []) => (await tx.query<R>(sql, pgParams(params))).rows,
    exec: async (sql) => { await tx.exec(sql); },
  });
  return {
    sessions: 'one',
    query: async (sql, params) => inSchema((tx) => queryable(tx).query(sql, params)),
    exec: async (sql) => inSchema((tx) => queryable(tx).exec(sql)),
    transaction: async (fn) => inSchema((tx) => fn(queryable(tx))),
    // The database outlives the app: the next app of this process (or a restart on the same directory) reuses it.
    close: async () => undefined,
  };
}
