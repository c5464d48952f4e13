import type { SqliteDb } from './sqlite.database.ts';
import { floatView } from './sqlite-vector-rows.ts';
import type { VectorSource } from './vector-scan/rerank.ts';

/**
 * A matrix's float vectors as the store holds them (memory_vectors, by seq and model), read for the re-rank on the
 * server's own connection: a primary-key lookup of one page or two per row, with the connection's ordinary page cache
 * (no memory mapping, whose pages would count in the process's RSS). A row deleted or re-embedded at another width
 * reads as gone.
 */
export function storedVectors(db: SqliteDb, modelId: string, dims: number): VectorSource {
  const select = db.prepare<[number, string, number], Buffer>(
    'SELECT vector FROM memory_vectors WHERE memory_seq = ? AND model_id = ? AND dims = ?').pluck();
  return {
    read(key) {
      const blob = select.get(key, modelId, dims);
      return blob === undefined ? undefined : floatView(blob, dims);
    },
  };
}
