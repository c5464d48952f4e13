import { createHash } from 'node:crypto';
import type { MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { isPgUniqueViolation, pgInt, SqlParams, type PgExecutor, type PgQueryable } from './pg-executor.ts';
import { filterSql, scopeSql } from './pg-memory-filter.ts';

/**
 * Below this many matching vectors in the scope, the top k come from an exact scan (ORDER BY cosine, which no index
 * serves); above it, from the model's HNSW index with pgvector's iterative scan, so that filters (scope, tags,
 * metadata) still fill the k. The exact total the port asks for costs a scan of the scope either way.
 */
export const DEFAULT_EXACT_SCAN_BELOW = 10_000;
/** pgvector indexes `vector` columns of at most 2,000 dimensions; wider models are always scanned exactly. */
const HNSW_MAX_DIMS = 2000;

/** pgvector's text form of a vector. Throws on anything but a vector (the write then rolls back). */
export const vectorText = (v: Float32Array): string => `[${Array.from(v, (x) => {
  if (!Number.isFinite(x)) throw new RangeError('a vector holds only finite numbers');
  return String(x);
}).join(',')}]`;
export const parseVector = (text: string): Float32Array => Float32Array.from(JSON.parse(text) as number[]);

const quoteLiteral = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const checkDims = (dims: number): number => {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) throw new RangeError(`unsupported vector width ${dims}`);
  return dims;
};

/**
 * One partial HNSW index per (model, width), over `embedding::vector(dims)` with cosine distance, created when this
 * process first writes a vector of that model (while the model has few rows, so the build is short); rows of other
 * models never meet the cast.
 */
export class PgVectorIndexes {
  private readonly known = new Set<string>();

  constructor(private readonly db: PgExecutor) {}

  async ensure(modelId: string, dims: number): Promise<void> {
    const key = `${modelId}\u0000${dims}`;
    if (this.known.has(key) || dims > HNSW_MAX_DIMS) return;
    const name = `memory_vectors_hnsw_${createHash('sha256').update(modelId).digest('hex').slice(0, 16)}_${checkDims(dims)}`;
    try {
      await this.db.exec(`CREATE INDEX IF NOT EXISTS ${name} ON memory_vectors
        USING hnsw ((embedding::vector(${dims})) vector_cosine_ops)
        WHERE model_id = ${quoteLiteral(modelId)} AND dims = ${dims}`);
    } catch (err) {
      // Another process created it at the same moment.
      if (!isPgUniqueViolation(err) && (err as { code?: string }).code !== '42P07') throw err;
    }
    this.known.add(key);
  }
}

export interface VectorHit {
  seq: number;
  cosine: number;
  vector?: Float32Array;
}

export interface VectorQuery {
  vector: Float32Array;
  modelId: string;
  limit: number;
  /** Hits need a cosine at least this. */
  minCosine: number;
  filter: MemoryFilter;
  withVectors?: boolean | undefined;
}

/** Best first (ties by insertion order); `total` counts every vector of the scope at or above the threshold. */
export async function searchVectors(db: PgExecutor, scope: Scope, q: VectorQuery, exactScanBelow: number):
  Promise<{ hits: VectorHit[]; total: number }> {
  const dims = checkDims(q.vector.length);
  const p = new SqlParams();
  const distance = `(v.embedding::vector(${dims}) <=> ${p.add(vectorText(q.vector))}::vector(${dims}))`;
  const where = `${scopeSql(p, scope)} AND v.model_id = ${p.add(q.modelId)} AND v.dims = ${dims}${filterSql(p, q.filter)}
    AND ${distance} <= ${p.add(1 - q.minCosine)}`;
  const from = 'FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq';
  const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n ${from} WHERE ${where}`, p.values);
  const total = count!.n;
  if (total === 0) return { hits: [], total };
  const columns = `m.seq, 1 - ${distance} AS cosine${q.withVectors ? ', v.embedding::text AS embedding' : ''}`;
  const limit = p.add(q.limit);
  type Row = { seq: number | string; cosine: number; embedding?: string };
  let rows: Row[];
  if (total < exactScanBelow || dims > HNSW_MAX_DIMS) {
    rows = await db.query<Row>(`SELECT ${columns} ${from} WHERE ${where} ORDER BY cosine DESC, m.seq LIMIT ${limit}`, p.values);
  } else {
    rows = await db.transaction(async (tx: PgQueryable) => {
      // Keep walking the graph until enough rows pass the filters; relaxed order is re-sorted below.
      await tx.exec("SET LOCAL hnsw.iterative_scan = 'relaxed_order'");
      return tx.query<Row>(`SELECT ${columns} ${from} WHERE ${where} ORDER BY ${distance} LIMIT ${limit}`, p.values);
    });
  }
  const hits = rows.map((r) => ({
    seq: pgInt(r.seq), cosine: r.cosine, ...(r.embedding !== undefined ? { vector: parseVector(r.embedding) } : {}),
  }));
  hits.sort((a, b) => b.cosine - a.cosine || a.seq - b.seq);
  return { hits, total };
}
