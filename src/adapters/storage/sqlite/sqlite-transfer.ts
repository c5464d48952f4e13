import type { StorageTransfer, TransferColumnKind, TransferRow } from '../../../core/storage-transfer.ts';
import { blobToVector, vectorToBlob, type SqliteDb } from './sqlite.database.ts';

/** The neutral column name `vector` is `vector` here too; times are epoch ms, JSON and tags are JSON text. */
function fromSqlite(kind: TransferColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'json': case 'tags': return JSON.parse(value as string);
    case 'vector': return Array.from(blobToVector(value as Buffer));
    default: return value;
  }
}

function toSqlite(kind: TransferColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'json': case 'tags': return JSON.stringify(value);
    case 'vector': return vectorToBlob(Float32Array.from(value as number[]));
    default: return value;
  }
}

/** Whole-table dump and load over the SQLite file (the keyword index follows by its triggers, tags by hand). */
export function createSqliteTransfer(db: SqliteDb): StorageTransfer {
  const insertTag = db.prepare('INSERT OR IGNORE INTO memory_tags (memory_seq, tag) VALUES (?, ?)');
  return {
    async count(table) {
      return db.prepare(`SELECT COUNT(*) FROM ${table.name}`).pluck().get() as number;
    },
    async dump(table, after, limit) {
      const columns = Object.keys(table.columns);
      const key = table.key.join(', ');
      const where = after === null ? '' : `WHERE (${key}) > (${table.key.map(() => '?').join(', ')})`;
      const rows = db.prepare(`SELECT ${columns.join(', ')} FROM ${table.name} ${where} ORDER BY ${key} LIMIT ?`)
        .all(...(after === null ? [] : table.key.map((k) => after[k])), limit) as Record<string, unknown>[];
      return rows.map((r) => Object.fromEntries(columns.map((c) => [c, fromSqlite(table.columns[c]!, r[c])])));
    },
    async load(table, rows) {
      const columns = Object.keys(table.columns);
      // DO NOTHING on a uniqueness conflict only (OR IGNORE would also hide a NOT NULL violation).
      const insert = db.prepare(`INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
        ON CONFLICT DO NOTHING`);
      const loadAll = db.transaction((batch: readonly TransferRow[]) => {
        let inserted = 0;
        for (const row of batch) {
          const changes = insert.run(...columns.map((c) => toSqlite(table.columns[c]!, row[c]))).changes;
          inserted += changes;
          if (changes > 0 && table.name === 'memories') {
            for (const tag of row.tags as string[]) insertTag.run(row.seq, tag);
          }
        }
        return inserted;
      });
      return loadAll(rows);
    },
  };
}
