import pg from 'pg';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage, type PostgresStorageOptions } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { PgVectorIndexes } from '../../src/adapters/storage/postgres/pg-vector-search.ts';
import type { Scope } from '../../src/core/scope.ts';
import { median } from '../lib/stats.ts';

export interface RecallResult {
  queries: number; k: number; meanRecall: number; minRecall: number; exactMedianMs: number; hnswMedianMs: number;
  /** The in-memory index (the adapter's default), against the same exact scan in SQL. */
  memoryMeanRecall: number; memoryMedianMs: number;
}

/**
 * HNSW recall@k of the PostgreSQL adapter scoring in SQL against its own exact scan, on the data a run left behind:
 * the same adapter over the same database, once told to scan exactly below any size and once to use HNSW from the
 * first vector (`exactScanBelow`; the model's index created first, as a node scoring in SQL would), and once scoring in
 * memory (the default), asked the same queries. Recall = shared ids of the two top-k lists / k.
 */
export async function hnswRecall(url: string, queryVectors: number[][], o: { efSearch: number; k?: number }): Promise<RecallResult> {
  const k = o.k ?? 10;
  const open = async (options: PostgresStorageOptions) => createPostgresStorage(pgPoolExecutor(new pg.Pool({ connectionString: url, max: 1 })), options);
  const exact = await open({ vectorScan: 'database', exactScanBelow: Number.MAX_SAFE_INTEGER });
  const hnsw = await open({ vectorScan: 'database', exactScanBelow: 0, hnswEfSearch: o.efSearch });
  const memory = await open({});
  try {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const { rows } = await pool.query<{ tenant_id: string; mode: string; workspace: string }>('SELECT DISTINCT tenant_id, mode, workspace FROM memories');
    const models = await pool.query<{ model_id: string; dims: number }>('SELECT DISTINCT model_id, dims FROM memory_vectors');
    await pool.end();
    if (models.rows.length !== 1) throw new Error(`expected one embedding model, found ${models.rows.length}`);
    const { model_id: modelId, dims } = models.rows[0]!;
    if (rows.length !== 1) throw new Error(`expected the one seeded workspace, found ${rows.length}`);
    const scope: Scope = { tenantId: rows[0]!.tenant_id, mode: rows[0]!.mode as Scope['mode'], workspace: rows[0]!.workspace };
    const indexPool = new pg.Pool({ connectionString: url, max: 1 });
    await new PgVectorIndexes(pgPoolExecutor(indexPool)).ensure(modelId, dims);
    await indexPool.end();
    const recalls: number[] = [];
    const memoryRecalls: number[] = [];
    const exactMs: number[] = [];
    const hnswMs: number[] = [];
    const memoryMs: number[] = [];
    for (const v of queryVectors) {
      // G4 query vectors are the model's own, zero-padded to 1536 numbers: the stored width is the prefix.
      const query = { vector: Float32Array.from(v.slice(0, dims)), modelId, limit: k, minCosine: -1, filter: {} };
      let t0 = performance.now();
      const truth = (await exact.memories.searchSimilar(scope, query)).hits.map((h) => h.memory.id);
      exactMs.push(performance.now() - t0);
      t0 = performance.now();
      const approx = new Set((await hnsw.memories.searchSimilar(scope, query)).hits.map((h) => h.memory.id));
      hnswMs.push(performance.now() - t0);
      t0 = performance.now();
      const inMemory = new Set((await memory.memories.searchSimilar(scope, query)).hits.map((h) => h.memory.id));
      memoryMs.push(performance.now() - t0);
      if (truth.length < k) throw new Error(`the exact scan found ${truth.length} of ${k} neighbours`);
      recalls.push(truth.filter((id) => approx.has(id)).length / k);
      memoryRecalls.push(truth.filter((id) => inMemory.has(id)).length / k);
    }
    return {
      queries: queryVectors.length, k, meanRecall: recalls.reduce((a, b) => a + b, 0) / recalls.length, minRecall: Math.min(...recalls),
      exactMedianMs: median(exactMs), hnswMedianMs: median(hnswMs),
      memoryMeanRecall: memoryRecalls.reduce((a, b) => a + b, 0) / memoryRecalls.length, memoryMedianMs: median(memoryMs),
    };
  } finally {
    await exact.close();
    await hnsw.close();
    await memory.close();
  }
}
