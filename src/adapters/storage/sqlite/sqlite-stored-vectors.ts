import type Database from 'better-sqlite3';
import { openReadOnly } from './sqlite-read-only.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { floatView } from './sqlite-vector-rows.ts';
import type { StoreRef, VectorSource } from './vector-scan/rerank.ts';

/**
 * A matrix's float vectors as the store holds them (memory_vectors, by seq and model), read for the re-rank: a
 * primary-key lookup of one page or two per row, with an ordinary page cache (no memory mapping, whose pages would
 * count in the process's RSS). A row deleted or re-embedded at another width reads as gone.
 *
 * storedVectors reads on the server's own connection (the event loop: the fallback, and in-memory stores); a store
 * file is also named as `store`, which a scan thread opens read-only itself (openStoredVectors) to re-rank its part
 * where it scanned it.
 */
export function storedVectors(db: SqliteDb, modelId: string, dims: number): VectorSource {
  const select = selectVector(db);
  return {
    read: (key) => readVector(select, key, modelId, dims),
    ...(db.memory ? {} : { store: { file: db.name, modelId, dims } }),
  };
}

/** A scan thread's read-only view of a store file's vectors; `snapshot` runs reads in one read transaction. */
export interface OpenStoredVectors {
  source(ref: StoreRef): VectorSource;
  snapshot<T>(read: () => T): T;
  close(): void;
}

/**
 * Page cache of a scan thread's connection: a search reads 10-40 rows (about two pages each at 512 dims), and
 * searches near each other read many of the same; more would only add to the RSS.
 */
const SCAN_THREAD_CACHE_KIB = 1024;

/**
 * Opens `file` read-only for a scan thread: no memory mapping, a small page cache. Each `snapshot` is a read
 * transaction of its own, begun when it first reads, so it sees every write committed before the part was posted
 * (and maybe later ones, which the re-rank detects as rows that no longer match their codes: rerank.ts).
 */
export function openStoredVectors(file: string): OpenStoredVectors {
  const db = openReadOnly(file, { mmapBytes: 0, cacheKiB: SCAN_THREAD_CACHE_KIB });
  const select = selectVector(db);
  return {
    source: ({ modelId, dims }) => ({ read: (key) => readVector(select, key, modelId, dims) }),
    snapshot: (read) => db.transaction(read).deferred(),
    close: () => db.close(),
  };
}

type SelectVector = Database.Statement<[number, string, number], Buffer>;

function selectVector(db: SqliteDb): SelectVector {
  return db.prepare<[number, string, number], Buffer>(
    'SELECT vector FROM memory_vectors WHERE memory_seq = ? AND model_id = ? AND dims = ?').pluck();
}

function readVector(select: SelectVector, key: number, modelId: string, dims: number): Float32Array | undefined {
  const blob = select.get(key, modelId, dims);
  return blob === undefined ? undefined : floatView(blob, dims);
}
