import type { MemoryMaintenance, ScopeFilter } from '../../../core/memories/memory-maintenance.ts';
import { pgInt, SqlParams, type PgExecutor } from './pg-executor.ts';
import {
  MEMORY_INSERT_COLUMNS, MEMORY_INSERT_PLACEHOLDERS, memoryColumns, memoryInsertValues, toMemory, type MemoryRow,
} from './pg-memory-row.ts';
import { vectorText, type PgVectorIndexes } from './pg-vector-search.ts';

type Row = MemoryRow;
const COLUMNS = memoryColumns('m');

/** `m.tenant_id = $n AND …` for the fields the filter names (`true` when it names none). */
function filterWhere(p: SqlParams, filter: ScopeFilter): string {
  const parts: string[] = [];
  if (filter.tenantId !== undefined) parts.push(`m.tenant_id = ${p.add(filter.tenantId)}`);
  if (filter.mode !== undefined) parts.push(`m.mode = ${p.add(filter.mode)}`);
  if (filter.workspace !== undefined) parts.push(`m.workspace = ${p.add(filter.workspace)}`);
  return parts.length > 0 ? parts.join(' AND ') : 'true';
}

/** The PostgreSQL memory repository's operator methods (see MemoryMaintenance). */
export function createPgMemoryMaintenance(db: PgExecutor, indexes: PgVectorIndexes): MemoryMaintenance {
  /** Each model's HNSW index exists before its first vector is written (as for the repository's own writes). */
  async function ensureIndexes(vectors: readonly { modelId: string; vector: Float32Array }[]): Promise<void> {
    const seen = new Set<string>();
    for (const v of vectors) {
      const key = `${v.modelId}\u0000${v.vector.length}`;
      if (seen.has(key)) continue;
      seen.add(key);
      await indexes.ensure(v.modelId, v.vector.length);
    }
  }

  return {
    async vectorCoverage(filter) {
      const p = new SqlParams();
      const where = filterWhere(p, filter);
      const [count] = await db.query<{ n: string | number }>(`SELECT COUNT(*) AS n FROM memories m WHERE ${where}`, p.values);
      const models = await db.query<{ model_id: string; dims: number; n: string | number }>(
        `SELECT v.model_id, v.dims, COUNT(*) AS n FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
         WHERE ${where} GROUP BY v.model_id, v.dims ORDER BY v.model_id COLLATE "C", v.dims`, p.values);
      return { memories: pgInt(count!.n), models: models.map((r) => ({ modelId: r.model_id, dims: r.dims, vectors: pgInt(r.n) })) };
    },

    async missingVectors(modelId, filter, afterCursor, limit) {
      const p = new SqlParams();
      const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM memories m
        WHERE m.seq > ${p.add(afterCursor)} AND ${filterWhere(p, filter)}
        AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq AND v.model_id = ${p.add(modelId)})
        ORDER BY m.seq LIMIT ${p.add(limit)}`, p.values);
      return rows.map((r) => ({ cursor: pgInt(r.seq), memory: toMemory(r) }));
    },

    async putVectors(writes) {
      if (writes.length === 0) return 0;
      await ensureIndexes(writes.map((w) => w.vector));
      return db.transaction(async (tx) => {
        let written = 0;
        for (const w of writes) {
          const done = await tx.query(`INSERT INTO memory_vectors (memory_seq, model_id, dims, embedding)
            SELECT m.seq, $1, $2, $3::vector FROM memories m
            WHERE m.tenant_id = $4 AND m.mode = $5 AND m.workspace = $6 AND m.id = $7 AND m.title = $8 AND m.content = $9
            ON CONFLICT (memory_seq, model_id) DO UPDATE SET dims = EXCLUDED.dims, embedding = EXCLUDED.embedding
            RETURNING 1 AS one`,
          [w.vector.modelId, w.vector.vector.length, vectorText(w.vector.vector), w.scope.tenantId, w.scope.mode,
            w.scope.workspace, w.id, w.title, w.content]);
          written += done.length;
        }
        return written;
      });
    },

    async dropOtherVectors(filter, keepModelId) {
      const p = new SqlParams();
      const keep = p.add(keepModelId);
      const rows = await db.query(`DELETE FROM memory_vectors v USING memories m
        WHERE m.seq = v.memory_seq AND v.model_id <> ${keep} AND ${filterWhere(p, filter)} RETURNING 1 AS one`, p.values);
      return rows.length;
    },

    async importMemories(items) {
      await ensureIndexes(items.flatMap((i) => i.vectors));
      return db.transaction(async (tx) => {
        let inserted = 0;
        const skipped: string[] = [];
        for (const { memory: m, vectors } of items) {
          // ON CONFLICT DO NOTHING covers the id and the (scope, client id) unique constraints alike.
          const [row] = await tx.query<{ seq: number | string }>(`INSERT INTO memories (${MEMORY_INSERT_COLUMNS})
            VALUES (${MEMORY_INSERT_PLACEHOLDERS}) ON CONFLICT DO NOTHING RETURNING seq`, memoryInsertValues(m));
          if (!row) {
            skipped.push(m.id);
            continue;
          }
          for (const v of vectors) {
            await tx.query(`INSERT INTO memory_vectors (memory_seq, model_id, dims, embedding) VALUES ($1, $2, $3, $4::vector)
              ON CONFLICT (memory_seq, model_id) DO UPDATE SET dims = EXCLUDED.dims, embedding = EXCLUDED.embedding`,
            [pgInt(row.seq), v.modelId, v.vector.length, vectorText(v.vector)]);
          }
          inserted += 1;
        }
        return { inserted, skipped };
      });
    },
  };
}
