import { startPglite } from './test/support/pglite.ts';
import { pgliteExecutor } from './src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from './src/adapters/storage/postgres/postgres.storage.ts';
import { vectorText } from './src/adapters/storage/postgres/pg-vector-search.ts';
const N = Number(process.argv[2] ?? 10000), D = 512;
const db = await startPglite();
const storage = await createPostgresStorage(pgliteExecutor(db));
let t = performance.now();
await db.exec(`INSERT INTO memories (id, tenant_id, mode, workspace, title, content, memory_type, tags, metadata, created_at, updated_at, created_by, updated_by)
  SELECT 'mem_' || g, 't', 'live', 'default', 'title ' || g, 'content number ' || g, 'context', '{}', '{}', now(), now(), 'u', 'u' FROM generate_series(1, ${N}) g`);
await db.exec(`INSERT INTO memory_vectors (memory_seq, model_id, dims, embedding)
  SELECT seq, 'm', ${D}, (SELECT array_agg(random()-0.5)::real[] FROM generate_series(1, ${D}) WHERE seq > 0)::vector FROM memories`);
console.log('insert', (performance.now() - t).toFixed(0));
const q = Float32Array.from({ length: D }, () => Math.random() - 0.5);
const scope = { tenantId: 't', mode: 'live', workspace: 'default' } as const;
for (let i = 0; i < 3; i++) {
  t = performance.now();
  const r = await storage.memories.searchSimilar(scope as never, { vector: q, modelId: 'm', limit: 10, minSimilarity: 0, filter: {} } as never);
  console.log('searchSimilar', (performance.now() - t).toFixed(1), r.total);
}
const qt = vectorText(q);
for (const sql of [
  `EXPLAIN ANALYZE SELECT count(*) FROM memory_vectors v WHERE (v.embedding::vector(${D}) <=> $1::vector(${D})) <= 2`,
  `EXPLAIN ANALYZE SELECT count(*) FROM memory_vectors v WHERE (v.embedding <=> $1::vector) <= 2`,
  `EXPLAIN ANALYZE SELECT count(*) FROM memory_vectors v`,
]) {
  t = performance.now();
  const r = await db.query(sql, sql.includes('$1') ? [qt] : []);
  console.log((performance.now() - t).toFixed(1), sql.slice(16, 90));
  console.log(r.rows.map((x: any) => x['QUERY PLAN']).join('\n'));
}
const st = await db.query(`SELECT attstorage FROM pg_attribute WHERE attrelid='memory_vectors'::regclass AND attname='embedding'`);
console.log(st.rows, (await db.query(`SELECT pg_size_pretty(pg_total_relation_size('memory_vectors')) s, pg_size_pretty(pg_relation_size('memory_vectors')) h`)).rows);
