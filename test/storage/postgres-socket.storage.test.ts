import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { startPglite, useFreshSchema } from '../support/pglite.ts';
import { describeStorageContract } from './storage.contract.ts';

// The same contract through the real `pg` driver and the code path real PostgreSQL takes (concurrent-connection
// executor, event appends serialised by the advisory lock), against PGlite served on loopback by pglite-socket. One
// connection: PGlite is a single session, and concurrent connections through pglite-socket lose each other's
// prepared statements when transactions race.
let pglite: PGlite;
let server: PGLiteSocketServer;
let port: number;
beforeAll(async () => {
  pglite = await startPglite();
  server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await server.start();
  port = Number(server.getServerConn().split(':').pop());
}, 60_000);
afterAll(async () => {
  await server.stop();
  await pglite.close();
});

describeStorageContract('postgres (pg driver over pglite-socket)', async () => {
  await useFreshSchema(pglite);
  const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 1 });
  return createPostgresStorage(pgPoolExecutor(pool));
});
