import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
// The same serving as the tests': several connections, each client's round trips kept together.
import { servePglite } from '../../test/support/pglite-server.ts';

/**
 * Child-process entry: an in-process PostgreSQL (PGlite with pgvector 0.8) served on a loopback port by
 * pglite-socket, the only PostgreSQL available on the benchmark machine. It runs in its own process so that its
 * single-threaded WASM engine competes with neither autocannon nor the server for an event loop. Prints
 * `pglite on PORT`, then serves until SIGTERM.
 */
const db = await PGlite.create({ extensions: { vector } });
await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
const server = await servePglite(db);
process.stdout.write(`pglite on ${new URL(server.url).port}\n`);
process.once('SIGTERM', () => {
  void server.stop().then(() => db.close()).then(() => process.exit(0));
});
