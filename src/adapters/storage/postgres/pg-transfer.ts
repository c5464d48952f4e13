import type { StorageTransfer, TransferColumnKind } from '../../../core/storage-transfer.ts';
import { pgInt, SqlParams, type PgExecutor } from './pg-executor.ts';
import { parseVector, PgVectorIndexes, vectorText } from './pg-vector-search.ts';

/** The neutral column `vector` is `embedding` here. */
const columnName = (column: string): string => (column === 'vector' ? 'embedding' : column);

const CASTS: Partial<Record<TransferColumnKind, string>> = { json: '::jsonb', vector: '::vector', time: '::timestamptz', tags: '::text[]' };

function fromPg(kind: TransferColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'int': case 'real': return pgInt(value);
    case 'time': return (value as Date).getTime();
    case 'vector': return Array.from(parseVector(value as string));
    default: return value;
  }
}

function toPg(kind: TransferColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'json': return JSON.stringify(value);
    case 'time': return new Date(value as number).toISOString();
    case 'vector': return vectorText(Float32Array.from(value as number[]));
    default: return value;
  }
}

/**
 * Whole-table dump and load over PostgreSQL. Rows keep their sequence numbers (OVERRIDING SYSTEM VALUE), and each
 * load moves the identity past them so new rows continue the order; vector indexes are made for each copied model.
 */
export function createPgTransfer(db: PgExecutor, hnsw = true): StorageTransfer {
  const indexes = new PgVectorIndexes(db, hnsw);
  return {
    async count(table) {
      const [row] = await db.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table.name}`);
      return pgInt(row!.n);
    },
    async dump(table, after, limit) {
      const columns = Object.keys(table.columns);
      const select = columns.map((c) => (table.columns[c] === 'vector' ? `${columnName(c)}::text AS ${c}` : c));
      const params = new SqlParams([limit]);
      // Text keys compare byte-wise (COLLATE "C"), as SQLite's do, so the order is the same whatever the database's locale.
      const keyOf = (k: string) => (table.columns[k] === 'text' ? `${k} COLLATE "C"` : k);
      const key = table.key.map(keyOf).join(', ');
      const where = after === null ? '' : `WHERE (${key}) > (${table.key.map((k) => params.add(after[k])).join(', ')})`;
      const rows = await db.query<Record<string, unknown>>(
        `SELECT ${select.join(', ')} FROM ${table.name} ${where} ORDER BY ${key} LIMIT $1`, params.values);
      return rows.map((r) => Object.fromEntries(columns.map((c) => [c, fromPg(table.columns[c]!, r[c])])));
    },
    async load(table, rows) {
      if (rows.length === 0) return 0;
      const columns = Object.keys(table.columns);
      if (table.name === 'memory_vectors') {
        const models = new Map(rows.map((r) => [`${r.model_id as string}\u0000${r.dims as number}`, r]));
        for (const r of models.values()) await indexes.ensure(r.model_id as string, r.dims as number);
      }
      const inserted = await db.transaction(async (tx) => {
        let n = 0;
        for (const row of rows) {
          const params = new SqlParams();
          const values = columns.map((c) => `${params.add(toPg(table.columns[c]!, row[c]))}${CASTS[table.columns[c]!] ?? ''}`);
          const done = await tx.query(`INSERT INTO ${table.name} (${columns.map(columnName).join(', ')})
            ${table.sequence ? 'OVERRIDING SYSTEM VALUE' : ''} VALUES (${values.join(', ')}) ON CONFLICT DO NOTHING RETURNING 1 AS one`,
          params.values);
          n += done.length;
        }
        if (table.sequence) {
          await tx.query(`SELECT setval(pg_get_serial_sequence($1, $2), (SELECT COALESCE(MAX(${table.sequence}), 0) + 1 FROM ${table.name}), false)`,
            [table.name, table.sequence]);
        }
        return n;
      });
      return inserted;
    },
  };
}

