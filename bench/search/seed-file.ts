import Database from 'better-sqlite3';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { vectorToBlob } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { INSERT_MEMORY_SQL, memoryParams } from '../../src/adapters/storage/sqlite/sqlite-memory-row.ts';
import { contentHash } from '../../src/core/memories/content-hash.ts';
import type { Scope } from '../../src/core/scope.ts';
import { memoryGenerator } from '../lib/corpus.ts';
import { benchMemory } from '../lib/seed-store.ts';

/** Rows per transaction: large, so that a million rows commit a hundred times rather than a thousand. */
const BATCH = 10_000;

/**
 * The insert triggers of memories and memory_vectors (migrations.ts) and what the seed does instead of running them
 * row by row: the keyword index rebuilt once, each version table moved on once; the corpus has no metadata (nothing
 * for memory_metadata) and the filter change log is left without rows (a filter cache then reads the filter again).
 */
const INSERT_TRIGGERS = new Set([
  'memories_fts_insert', 'memories_version_insert', 'memory_vectors_version_insert', 'memory_metadata_insert',
  'memories_filter_version_insert',
]);
const AFTER_SEED = `
  INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
  UPDATE workspace_versions SET version = version + 1;
  UPDATE workspace_filter_versions SET version = version + 1;`;

/**
 * Seeds generated memories straight into a migrated store file (the server stopped) with the rows the store's own
 * insert writes (the memory, its tags, its hashing vector), in large transactions of prepared statements, with the
 * insert triggers dropped meanwhile and their effects made once at the end (INSERT_TRIGGERS): a million in minutes,
 * where the store's atomic batches of 1,000 managed a few hundred a second at that size. The same corpus and vectors
 * as seedStoreDirectly (bench/lib/seed-store.ts).
 */
export function seedStoreFile(file: string, scope: Scope, options: {
  size: number;
  dims: number;
  /** Memories already there. */
  from?: number;
  onProgress?: (done: number) => void;
}): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const triggers = db.prepare<[], { name: string; sql: string }>(
    `SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('memories', 'memory_vectors') AND sql LIKE '%AFTER INSERT%'`).all();
  const unknown = triggers.filter((t) => !INSERT_TRIGGERS.has(t.name)).map((t) => t.name);
  if (unknown.length > 0) throw new Error(`seed-file.ts does not know what these insert triggers do: ${unknown.join(', ')}`);
  for (const t of triggers) db.exec(`DROP TRIGGER ${t.name}`);
  const insertMemory = db.prepare(INSERT_MEMORY_SQL);
  const insertTag = db.prepare('INSERT OR IGNORE INTO memory_tags (memory_seq, tag) VALUES (?, ?)');
  const insertVector = db.prepare('INSERT INTO memory_vectors (memory_seq, model_id, dims, vector) VALUES (?, ?, ?, ?)');
  const next = memoryGenerator(42);
  const modelId = `hashing:v1-${options.dims}`;
  const batch = db.transaction((n: number) => {
    for (let i = 0; i < n; i++) {
      const memory = benchMemory(next(), scope);
      const seq = Number(insertMemory.run(memoryParams(memory, contentHash(memory.content))).lastInsertRowid);
      for (const tag of memory.tags) insertTag.run(seq, tag);
      insertVector.run(seq, modelId, options.dims, vectorToBlob(hashEmbed(`${memory.title}\n\n${memory.content}`, options.dims)));
    }
  });
  try {
    for (let done = options.from ?? 0; done < options.size;) {
      const n = Math.min(BATCH, options.size - done);
      batch(n);
      done += n;
      options.onProgress?.(done);
    }
  } finally {
    // Also after a failure: the store keeps its triggers and agrees with the rows written.
    db.transaction(() => {
      for (const t of triggers) db.exec(t.sql);
      db.exec(AFTER_SEED);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
}
