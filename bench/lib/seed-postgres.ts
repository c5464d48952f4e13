import pg from 'pg';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import type { Scope } from '../../src/core/scope.ts';
import { MEMORIES_PATH, postJson } from '../http/client.ts';
import type { PostgresHandle } from './postgres.ts';
import { phase } from './progress.ts';
import { seedStoreDirectly } from './seed-store.ts';
import { createEnterpriseKey, startServer } from './server.ts';

/**
 * A key and one memory through G1 on a server over `db` (the memory names the key's scope in the store), then the
 * rest straight into the database through the adapter's atomic batches, as the server would have stored them
 * (bench/lib/seed-store.ts: 10,000 over HTTP take minutes); then ANALYZE. Returns the key, and the server's data
 * directory when `keepDataDir` (a server restarted on it finds the same files), else removed.
 */
export async function seedPostgresWorkspace(env: Record<string, string>, db: PostgresHandle, o: { size: number; dims: number; keepDataDir?: boolean }):
  Promise<{ key: string; dataDir: string | null }> {
  const server = await startServer('hashing', { env });
  let key: string;
  try {
    key = await createEnterpriseKey(server, 'hashing', env);
    await postJson(server.url, MEMORIES_PATH, key, { title: 'first', content: 'the first memory' }, 201);
    await server.stop();
  } catch (err) {
    await server.dispose();
    throw err;
  }
  if (!o.keepDataDir) await server.dispose();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  const storage = await createPostgresStorage(pgPoolExecutor(pool), { keyCache: false });
  try {
    const [scope] = (await pool.query<Scope>('SELECT tenant_id AS "tenantId", mode, workspace FROM memories LIMIT 1')).rows;
    if (!scope) throw new Error('the scope\'s first memory is missing');
    const bar = phase(`seed ${o.size.toLocaleString('en')} × ${o.dims}`, o.size, 'memories');
    await seedStoreDirectly(storage.memories, scope, { size: o.size, dims: o.dims, from: 1, onProgress: (done) => bar.update(done) });
    bar.stop();
  } finally {
    await storage.close();
  }
  await db.analyze();
  return { key, dataDir: o.keepDataDir ? server.dataDir : null };
}
