import { startPglite } from './test/support/pglite.ts';
import { pgliteExecutor, type PgExecutor } from './src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from './src/adapters/storage/postgres/postgres.storage.ts';
const N = Number(process.argv[2] ?? 10000), D = 512;
const db = await startPglite();
const base = pgliteExecutor(db);
const logged: { sql: string; params: readonly unknown[] }[] = [];
let on = false;
const wrap = (q: any) => async (sql: string, params: readonly unknown[] = []) => { const t = performance.now(); const r = await q(sql, params); if (on) { console.log((performance.now() - t).toFixed(1), 'ms', sql.replace(/\s+/g, ' ').slice(0, 300)); logged.push({ sql, params }); } return r; };
const ex: PgExecutor = { ...base, query: wrap(base.query), transaction: (fn) => base.transaction((tx) => fn({ ...tx, query: wrap(tx.query) })) };
const storage = await createPostgresStorage(ex);
await db.exec(`INSERT INTO memories (id, tenant_id, mode, workspace, title, content, memory_type, tags, metadata, created_at, updated_at, created_by, updated_by)
  SELECT 'mem_' || g, 't', 'live', 'default', 'title ' || g, 'content number ' || g, 'context', '{}', '{}', now(), now(), 'u', 'u' FROM generate_series(1, ${N}) g`);
await db.exec(`INSERT INTO memory_vectors (memory_seq, model_id, dims, embedding)
  SELECT seq, 'm', ${D}, (SELECT array_agg(random()-0.5)::real[] FROM generate_series(1, ${D}) WHERE seq > 0)::vector FROM memories`);
await db.exec('ANALYZE');
const q = Float32Array.from({ length: D }, () => Math.random() - 0.5);
const scope = { tenantId: 't', mode: 'live', workspace: 'default' } as const;
on = true;
const r = await storage.memories.searchSimilar(scope as never, { vector: q, modelId: 'm', limit: 10, minSimilarity: 0, filter: {} } as never);
on = false;
for (const l of logged.slice(0, 3)) {
  const { pgParams } = await import('./src/adapters/storage/postgres/pg-executor.ts');
  const e = await db.query('EXPLAIN (ANALYZE, BUFFERS) ' + l.sql, pgParams(l.params));
  console.log(e.rows.map((x: any) => x['QUERY PLAN'].replace(/'\[[^\]]*\]'/g, "'[vec]'")).join('\n'));
}
