import pg from 'pg';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { Scope } from '../../src/core/scope.ts';
import { median } from '../lib/stats.ts';

export interface RecallResult { queries: number; k: number; meanRecall: number; minRecall: number; exactMedianMs: number; hnswMedianMs: number }

/**
 * HNSW recall@k of the PostgreSQL adapter against its own exact scan, on the data a run left behind: the same
 * adapter twice over the same database, once told to scan exactly below any size and once to use HNSW from the
 * first vector (`exactScanBelow`), asked the same queries. Recall = shared ids of the two top-k lists / k.
 */
export async function hnswRecall(url: string, queryVectors: number[][], o: { efSearch: number; k?: number }): Promise<RecallResult> {
  const k = o.k ?? 10;
  const open = async (exactScanBelow: number) => createPostgresStorage(pgPoolExecutor(new pg.Pool({ connectionString: url, max: 1 })), { exactScanBelow, hnswEfSearch: o.efSearch });
  const exact = await open(Number.MAX_SAFE_INTEGER);
  const hnsw = await open(0);
  try {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const { rows } = await pool.query<{ tenant_id: string; mode: string; workspace: string }>('SELECT DISTINCT tenant_id, mode, workspace FROM memories');
    const models = await pool.query<{ model_id: string; dims: number }>('SELECT DISTINCT model_id, dims FROM memory_vectors');
    await pool.end();
    if (models.rows.length !== 1) throw new Error(`expected one embedding model, found ${models.rows.length}`);
    const { model_id: modelId, dims } = models.rows[0]!;
    if (rows.length !== 1) throw new Error(`expected the one seeded workspace, found ${rows.length}`);
    const scope: Scope = { tenantId: rows[0]!.tenant_id, mode: rows[0]!.mode as Scope['mode'], workspace: rows[0]!.workspace };
    const recalls: number[] = [];
    const exactMs: number[] = [];
    const hnswMs: number[] = [];
    for (const v of queryVectors) {
      // G4 query vectors are the model's own, zero-padded to 1536 numbers: the stored width is the prefix.
      const query = { vector: Float32Array.from(v.slice(0, dims)), modelId, limit: k, minCosine: -1, filter: {} };
      let t0 = performance.now();
      const truth = (await exact.memories.searchSimilar(scope, query)).hits.map((h) => h.memory.id);
      exactMs.push(performance.now() - t0);
      t0 = performance.now();
      const approx = new Set((await hnsw.memories.searchSimilar(scope, query)).hits.map((h) => h.memory.id));
      hnswMs.push(performance.now() - t0);
      if (truth.length < k) throw new Error(`the exact scan found ${truth.length} of ${k} neighbours`);
      recalls.push(truth.filter((id) => approx.has(id)).length / k);
    }
    return {
      queries: queryVectors.length, k, meanRecall: recalls.reduce((a, b) => a + b, 0) / recalls.length, minRecall: Math.min(...recalls),
      exactMedianMs: median(exactMs), hnswMedianMs: median(hnswMs),
    };
  } finally {
    await exact.close();
    await hnsw.close();
  }
}
