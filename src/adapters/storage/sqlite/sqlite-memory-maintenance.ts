import { contentHash } from '../../../core/memories/content-hash.ts';
import type { MemoryMaintenance, ScopeFilter } from '../../../core/memories/memory-maintenance.ts';
import type { Memory, StoredVector } from '../../../core/memories/memory.types.ts';
import { vectorToBlob, type SqliteDb } from './sqlite.database.ts';
import type { SqliteKeywordRanking } from './sqlite-keyword-ranking.ts';
import { INSERT_MEMORY_SQL, memoryParams, toMemory, type MemoryRow } from './sqlite-memory-row.ts';

/** `m.tenant_id = ? AND …` for the fields the filter names (`1` when it names none). */
function filterWhere(filter: ScopeFilter): { sql: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (filter.tenantId !== undefined) { parts.push('m.tenant_id = ?'); params.push(filter.tenantId); }
  if (filter.mode !== undefined) { parts.push('m.mode = ?'); params.push(filter.mode); }
  if (filter.workspace !== undefined) { parts.push('m.workspace = ?'); params.push(filter.workspace); }
  return { sql: parts.length > 0 ? parts.join(' AND ') : '1', params };
}

/**
 * The SQLite memory repository's operator methods (see MemoryMaintenance). They share the repository's in-process
 * indexes: their vector and memory writes move the touched workspaces' versions (migration 15's triggers), so the
 * vector cache reloads those workspaces alone on their next search and keeps every other workspace's matrices
 * (nothing is cleared here); imports reach the keyword statistics (lengths and posting lists).
 */
export function createSqliteMemoryMaintenance(db: SqliteDb, keywords: Pick<SqliteKeywordRanking, 'written'>): MemoryMaintenance {
  const putVector = db.prepare(`INSERT INTO memory_vectors (memory_seq, model_id, dims, vector)
    SELECT m.seq, ?, ?, ? FROM memories m
    WHERE m.tenant_id = ? AND m.mode = ? AND m.workspace = ? AND m.id = ? AND m.title = ? AND m.content = ?
    ON CONFLICT (memory_seq, model_id) DO UPDATE SET dims = excluded.dims, vector = excluded.vector`);
  // The whole store's coverage (what /health asks every few seconds) from indexes only: reading `dims` row by row
  // would read every vector's page (200 MB at 100k x 512) on the event loop. A model id stands for one width (the
  // embedders put the width in the id, e.g. hashing:v1-512), so its width is read from one row; vectors go with their
  // memory (ON DELETE CASCADE), so no join is needed.
  const memoryCount = db.prepare<[], number>('SELECT COUNT(*) FROM memories').pluck();
  const vectorsPerModel = db.prepare<[], { model_id: string; n: number }>(
    'SELECT model_id, COUNT(*) AS n FROM memory_vectors GROUP BY model_id ORDER BY model_id');
  const modelWidth = db.prepare<[string], number>('SELECT dims FROM memory_vectors WHERE model_id = ? LIMIT 1').pluck();
  const wholeStoreCoverage = () => ({
    memories: memoryCount.get()!,
    models: vectorsPerModel.all().map((r) => ({ modelId: r.model_id, dims: modelWidth.get(r.model_id)!, vectors: r.n })),
  });
  const idTaken = db.prepare<[string], number>('SELECT 1 FROM memories WHERE id = ?').pluck();
  const clientIdTaken = db.prepare<[string, string, string, string], number>(
    'SELECT 1 FROM memories WHERE tenant_id = ? AND mode = ? AND workspace = ? AND client_id = ?').pluck();
  const insertMemory = db.prepare(INSERT_MEMORY_SQL);
  const insertTag = db.prepare('INSERT OR IGNORE INTO memory_tags (memory_seq, tag) VALUES (?, ?)');
  const insertVector = db.prepare('INSERT OR REPLACE INTO memory_vectors (memory_seq, model_id, dims, vector) VALUES (?, ?, ?, ?)');

  const putTx = db.transaction((writes: readonly { scope: Memory['scope']; id: string; title: string; content: string; vector: StoredVector }[]) => {
    let written = 0;
    for (const w of writes) {
      written += putVector.run(w.vector.modelId, w.vector.vector.length, vectorToBlob(w.vector.vector),
        w.scope.tenantId, w.scope.mode, w.scope.workspace, w.id, w.title, w.content).changes;
    }
    return written;
  });

  const importTx = db.transaction((items: readonly { memory: Memory; vectors: readonly StoredVector[] }[]) => {
    const inserted: { memory: Memory; seq: number }[] = [];
    const skipped: string[] = [];
    for (const { memory: m, vectors } of items) {
      if (idTaken.get(m.id) !== undefined
        || (m.clientId !== null && clientIdTaken.get(m.scope.tenantId, m.scope.mode, m.scope.workspace, m.clientId) !== undefined)) {
        skipped.push(m.id);
        continue;
      }
      const seq = Number(insertMemory.run(memoryParams(m, contentHash(m.content))).lastInsertRowid);
      for (const tag of m.tags) insertTag.run(seq, tag);
      for (const v of vectors) insertVector.run(seq, v.modelId, v.vector.length, vectorToBlob(v.vector));
      inserted.push({ memory: m, seq });
    }
    return { inserted, skipped };
  });

  return {
    async vectorCoverage(filter) {
      if (filter.tenantId === undefined && filter.mode === undefined && filter.workspace === undefined) return wholeStoreCoverage();
      const where = filterWhere(filter);
      const memories = db.prepare<string[], number>(`SELECT COUNT(*) FROM memories m WHERE ${where.sql}`).pluck().get(...where.params)!;
      const models = db.prepare<string[], { model_id: string; dims: number; n: number }>(
        `SELECT v.model_id, v.dims, COUNT(*) AS n FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
         WHERE ${where.sql} GROUP BY v.model_id, v.dims ORDER BY v.model_id, v.dims`).all(...where.params);
      return { memories, models: models.map((r) => ({ modelId: r.model_id, dims: r.dims, vectors: r.n })) };
    },

    async missingVectors(modelId, filter, afterCursor, limit) {
      const where = filterWhere(filter);
      const rows = db.prepare<unknown[], MemoryRow>(`SELECT m.* FROM memories m WHERE m.seq > ? AND ${where.sql}
        AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq AND v.model_id = ?)
        ORDER BY m.seq LIMIT ?`).all(afterCursor, ...where.params, modelId, limit);
      return rows.map((r) => ({ cursor: r.seq, memory: toMemory(r) }));
    },

    async putVectors(writes) {
      if (writes.length === 0) return 0;
      return putTx(writes);
    },

    async dropOtherVectors(filter, keepModelId) {
      const where = filterWhere(filter);
      const { changes } = db.prepare(`DELETE FROM memory_vectors WHERE model_id <> ? AND memory_seq IN
        (SELECT m.seq FROM memories m WHERE ${where.sql})`).run(keepModelId, ...where.params);
      return changes;
    },

    async importMemories(items) {
      const { inserted, skipped } = importTx(items);
      for (const { memory, seq } of inserted) keywords.written(memory.scope, seq);
      return { inserted: inserted.length, skipped };
    },
  };
}
