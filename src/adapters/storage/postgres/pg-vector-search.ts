import { createHash } from 'node:crypto';
import type { MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { isPgUniqueViolation, pgInt, SqlParams, type PgExecutor, type PgQueryable } from './pg-executor.ts';
import { filterSql, scopeSql } from './pg-memory-filter.ts';
import { EXACT_SIMILARITY_SCAN_MAX } from '../../../core/memories/memory.repository.ts';
import { exactScores } from '../sqlite/vector-scan/rerank.ts';
import { unitRowInto } from '../sqlite/vector-scan/matrix-storage.ts';
import { decodeVector, type PgVectorIndex } from './pg-vector-index.ts';

/**
 * Up to this many vectors of the query's model in the scope (before filters), similarity search scans exactly: the
 * true top k and the exact total. Above it, the top k come from the model's HNSW index with pgvector's iterative
 * scan (so filters still fill the k), and `total` is the port's lower bound (docs/architecture.md, "Similarity
 * totals"). The storage port's EXACT_SIMILARITY_SCAN_MAX.
 */
export const DEFAULT_EXACT_SCAN_BELOW = EXACT_SIMILARITY_SCAN_MAX;
/**
 * `hnsw.ef_search` for index scans: the candidate list pgvector keeps while walking the graph. pgvector's default,
 * 40, recalls clearly fewer of the true top 10; this value was chosen from the recall measured in BENCHMARKS.md
 * ("Search on SQLite beside PostgreSQL"). A query asking for more than this many hits raises it to that number.
 */
export const DEFAULT_HNSW_EF_SEARCH = 200;
/** pgvector indexes `vector` columns of at most 2,000 dimensions; wider models are always scanned exactly. */
const HNSW_MAX_DIMS = 2000;

/** pgvector's text form of a vector. Throws on anything but a vector (the write then rolls back). */
export const vectorText = (v: Float32Array): string => `[${Array.from(v, (x) => {
  if (!Number.isFinite(x)) throw new RangeError('a vector holds only finite numbers');
  return String(x);
}).join(',')}]`;
export const parseVector = (text: string): Float32Array => Float32Array.from(JSON.parse(text) as number[]);

/** A number from configuration (not a request) written into SQL, so that the statement's parameters stay the same. */
const pgLimit = (n: number): string => String(Math.min(Math.max(0, Math.floor(n)), Number.MAX_SAFE_INTEGER));
const quoteLiteral = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const checkDims = (dims: number): number => {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) throw new RangeError(`unsupported vector width ${dims}`);
  return dims;
};

/**
 * One partial HNSW index per (model, width), over `embedding::vector(dims)` with cosine distance, created when this
 * process first writes a vector of that model (while the model has few rows, so the build is short); rows of other
 * models never meet the cast. Only for vectors scored in SQL (`enabled`): the in-memory index needs none.
 */
export class PgVectorIndexes {
  private readonly known = new Set<string>();

  constructor(private readonly db: PgExecutor, private readonly enabled = true) {}

  async ensure(modelId: string, dims: number): Promise<void> {
    const key = `${modelId}\u0000${dims}`;
    if (!this.enabled || this.known.has(key) || dims > HNSW_MAX_DIMS) return;
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
  /** The caller ranks keywords meanwhile (hybrid search): an in-memory scan leaves it a core. */
  callerBusy?: boolean | undefined;
}

export interface VectorSearchOptions {
  /** Scopes with at most this many vectors of the model are scanned exactly. */
  exactScanBelow: number;
  hnswEfSearch: number;
  /**
   * When set, vectors are scored in this process (pg-vector-index.ts), not by the database: the exact scan whatever
   * the scope's size, and cosinesOf scores as that scan does. Null: in SQL, as above.
   */
  index?: PgVectorIndex | null | undefined;
}

/**
 * Best first (ties by insertion order). Exact (the scope holds at most `exactScanBelow` vectors of the model):
 * `total` counts every vector of the scope at or above the threshold. From the HNSW index: one hit more than asked
 * is fetched, so `total` (the hits the index found, at most `limit` + 1) tells a caller paging by `total` that
 * there is more, without counting the whole scope.
 */
export async function searchVectors(db: PgExecutor, scope: Scope, q: VectorQuery, o: VectorSearchOptions):
  Promise<{ hits: VectorHit[]; total: number }> {
  const dims = checkDims(q.vector.length);
  if (o.index) return searchInMemory(db, o.index, scope, q);
  const p = new SqlParams();
  const from = 'FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq';
  const ofModel = `${scopeSql(p, scope)} AND v.model_id = ${p.add(q.modelId)} AND v.dims = ${dims}`;
  const distance = `(v.embedding::vector(${dims}) <=> ${p.add(vectorText(q.vector))}::vector(${dims}))`;
  const filtered = `${ofModel}${filterSql(p, q.filter)}`;
  const maxDistance = p.add(1 - q.minCosine);
  const shared = p.values.length;
  type Row = { seq: number | string; id: string; cosine: number; embedding?: string };
  let rows: Row[];
  let total: number;
  // One round trip: the scope's vector count (no distances) gates an exact scan that computes each distance once into
  // rows without the vector (sorting rows holding one spilled to disk); above the limit the index query below runs.
  const hnsw = dims <= HNSW_MAX_DIMS;
  const gate = hnsw ? ` AND (SELECT n FROM probe) <= ${pgLimit(o.exactScanBelow)}` : '';
  const embedding = q.withVectors ? ', v.embedding::text AS embedding' : '';
  const [first, ...more] = await db.query<Row & { vectors: number; total: number }>(
    `WITH probe AS (SELECT ${hnsw ? `COUNT(*)::int AS n FROM (SELECT 1 ${from} WHERE ${ofModel} LIMIT ${pgLimit(o.exactScanBelow + 1)}) AS s` : '0 AS n'}),
       scored AS MATERIALIZED (SELECT m.seq, m.id, ${distance} AS d${embedding} ${from} WHERE ${filtered}${gate}),
       kept AS (SELECT * FROM scored WHERE d <= ${maxDistance})
     SELECT (SELECT n FROM probe) AS vectors, c.total, top.*
     FROM (SELECT COUNT(*)::int AS total FROM kept) c
       LEFT JOIN LATERAL (SELECT seq, id, 1 - d AS cosine${q.withVectors ? ', embedding' : ''} FROM kept ORDER BY 1 - d DESC, seq LIMIT ${p.add(q.limit)}) top ON TRUE`,
    p.values);
  if (!hnsw || first!.vectors <= o.exactScanBelow) {
    total = first!.total;
    rows = first!.seq === null ? [] : [first!, ...more];
  } else {
    const h = new SqlParams(p.values.slice(0, shared));
    const efSearch = Math.min(1000, Math.max(o.hnswEfSearch, q.limit + 1));
    rows = await db.transaction(async (tx: PgQueryable) => {
      // Keep walking the graph until enough rows pass the filters; relaxed order is re-sorted below.
      await tx.exec(`SET LOCAL hnsw.iterative_scan = 'relaxed_order'; SET LOCAL hnsw.ef_search = ${efSearch}`);
      return tx.query<Row>(`SELECT m.seq, m.id, 1 - ${distance} AS cosine${embedding} ${from}
        WHERE ${filtered} AND ${distance} <= ${maxDistance} ORDER BY ${distance} LIMIT ${h.add(q.limit + 1)}`, h.values);
    });
    total = rows.length;
  }
  const hits = rows.map((r) => ({
    seq: pgInt(r.seq), cosine: r.cosine, ...(r.embedding !== undefined ? { vector: parseVector(r.embedding) } : {}),
  }));
  hits.sort((a, b) => b.cosine - a.cosine || a.seq - b.seq);
  return { hits: hits.slice(0, q.limit), total };
}

/** The exact scan in this process; the hits' stored vectors read afterwards when asked for. */
async function searchInMemory(db: PgExecutor, index: PgVectorIndex, scope: Scope, q: VectorQuery):
  Promise<{ hits: VectorHit[]; total: number }> {
  const { hits, total } = await index.search(scope, {
    vector: q.vector, modelId: q.modelId, limit: q.limit, minCosine: q.minCosine, filter: q.filter, callerBusy: q.callerBusy,
  });
  const vectors = q.withVectors && hits.length > 0 ? await storedVectorsOf(db, hits.map((h) => h.seq), q.modelId, q.vector.length) : null;
  return {
    hits: hits.map((h) => ({ seq: h.seq, cosine: h.cosine, ...(vectors ? { vector: vectors.get(h.seq) } : {}) })),
    total,
  };
}

/** The stored vectors of these memories for the model and width (absent when gone), as the in-memory index decodes them. */
async function storedVectorsOf(db: PgQueryable, seqs: readonly number[], modelId: string, dims: number): Promise<Map<number, Float32Array>> {
  const rows = await db.query<{ seq: number | string; vector: string }>(`SELECT v.memory_seq AS seq,
      encode(vector_send(v.embedding), 'base64') AS vector FROM memory_vectors v
    WHERE v.memory_seq = ANY($1::bigint[]) AND v.model_id = $2 AND v.dims = $3`, [seqs.map(String), modelId, dims]);
  return new Map(rows.map((r) => [pgInt(r.seq), decodeVector(r.vector, dims)]));
}

/**
 * The cosine of each given memory's vector of the model (and the query's width) to `vector`, as the search computes
 * it, so that a memory both return has one cosine: in SQL by the expression the search orders by, or (`inMemory`)
 * by the in-memory scan's own exact score. pgvector answers NaN when either vector is all zeros: that is 0 here, as
 * core/embeddings/vectors.ts `cosine` has it.
 */
export async function cosinesOf(db: PgQueryable, scope: Scope, seqs: readonly number[], q: { vector: Float32Array; modelId: string },
  inMemory = false): Promise<Map<number, number>> {
  if (seqs.length === 0) return new Map();
  const dims = checkDims(q.vector.length);
  if (inMemory) {
    const p = new SqlParams();
    const rows = await db.query<{ seq: number | string; vector: string }>(`SELECT m.seq, encode(vector_send(v.embedding), 'base64') AS vector
      FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq AND v.model_id = ${p.add(q.modelId)} AND v.dims = ${dims}
      WHERE ${scopeSql(p, scope)} AND m.seq = ANY(${p.add(seqs.map(String))}::bigint[])`, p.values);
    const stored = new Map(rows.map((r) => [pgInt(r.seq), decodeVector(r.vector, dims)]));
    const unit = new Float32Array(dims);
    unitRowInto(q.vector, dims, unit);
    const keys = [...stored.keys()];
    const scores = exactScores({ read: (key) => stored.get(key) }, unit, keys);
    return new Map(keys.map((key, i) => [key, scores[i]!]));
  }
  const p = new SqlParams();
  const rows = await db.query<{ seq: number | string; cosine: number }>(
    `SELECT m.seq, 1 - (v.embedding::vector(${dims}) <=> ${p.add(vectorText(q.vector))}::vector(${dims})) AS cosine
     FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
     WHERE ${scopeSql(p, scope)} AND v.model_id = ${p.add(q.modelId)} AND v.dims = ${dims}
       AND m.seq = ANY(${p.add(seqs.map(String))}::bigint[])`,
    p.values);
  return new Map(rows.map((r) => [pgInt(r.seq), Number.isNaN(r.cosine) ? 0 : r.cosine]));
}
