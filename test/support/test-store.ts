import type { PGlite, Transaction } from '@electric-sql/pglite';
import { pgParams, type PgExecutor, type PgQueryable } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { startPglite } from './pglite.ts';

/**
 * Which store createTestApp opens: `MNEMO_TEST_STORE=postgres` (the vitest project `postgres` sets it) runs the same
 * tests on the PostgreSQL adapter over an in-process PGlite; anything else, the SQLite file as the server ships.
 */
export const testStoreKind = (): 'sqlite' | 'postgres' => (process.env.MNEMO_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite');

// One PGlite per test process (starting one takes seconds), created on first use and kept until the process ends:
// the `postgres` project runs its files unisolated, so they all share it. Each data directory gets its own schema,
// so an app reopened on the same directory (a restart) finds its data, and two apps open at once do not mix.
let shared: Promise<PGlite> | undefined;
const schemaOfDataFile = new Map<string, string>();

/**
 * A PostgreSQL storage on the schema that stands for `dataFile`. PGlite is one session, so a session-wide
 * search_path would leak between apps open at the same time: every statement runs in its own transaction that
 * sets the schema locally first. Parameters go through the adapter's own pgParams, as in pgliteExecutor.
 */
export async function openTestPostgresStorage(dataFile: string): Promise<Storage> {
  shared ??= startPglite();
  const db = await shared;
  let schema = schemaOfDataFile.get(dataFile);
  if (schema === undefined) {
    schema = `app_${schemaOfDataFile.size}`;
    schemaOfDataFile.set(dataFile, schema);
    await db.exec(`CREATE SCHEMA ${schema}`);
  }
  return createPostgresStorage(schemaExecutor(db, schema));
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
