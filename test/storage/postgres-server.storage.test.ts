import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { describeStorageContract } from './storage.contract.ts';

/**
 * The same contract against a PostgreSQL server of your own (with pgvector ≥ 0.8), when MNEMO_TEST_DATABASE_URL names
 * one: `MNEMO_TEST_DATABASE_URL=postgres://user:pw@host:5432/db npx vitest run test/storage/postgres-server.storage.test.ts`.
 * Each store gets a new schema (dropped at the end), so the database may hold other data. Not set (CI: no
 * pgvector package on Debian 12), the file reports one skipped test saying so.
 */
const url = process.env.MNEMO_TEST_DATABASE_URL;

if (url) {
  const schemas: string[] = [];
  let admin: pg.Pool;
  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 1 });
    await admin.query('CREATE EXTENSION IF NOT EXISTS vector');
  });
  afterAll(async () => {
    for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await admin.end();
  });
  let opened: { schema: string; pool: pg.Pool } | null = null;
  /** A pool whose every connection works in `schema` (its first query, queued before any other, sets the path). */
  const openPool = (schema: string) => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('connect', (client) => { void client.query(`SET search_path TO ${schema}, public`); });
    return pool;
  };
  describeStorageContract('postgres (MNEMO_TEST_DATABASE_URL)', async () => {
    const schema = `mnemo_contract_${process.pid}_${schemas.length}`;
    schemas.push(schema);
    await admin.query(`CREATE SCHEMA ${schema}`);
    const pool = openPool(schema);
    opened = { schema, pool };
    return createPostgresStorage(pgPoolExecutor(pool));
  }, {
    // A second pool on the same schema: the concurrency tests race across real server connections.
    openSecond: async () => createPostgresStorage(pgPoolExecutor(openPool(opened!.schema))),
  });
} else {
  describe('storage contract: postgres (MNEMO_TEST_DATABASE_URL)', () => {
    it.skip('runs when MNEMO_TEST_DATABASE_URL names a PostgreSQL server with pgvector', () => undefined);
  });
}
