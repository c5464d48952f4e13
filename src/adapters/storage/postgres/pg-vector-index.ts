import type { MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { ScanPool } from '../sqlite/vector-scan/scan-pool.ts';
import { VectorMatrix } from '../sqlite/vector-scan/vector-matrix.ts';
import { pgInt, SqlParams, type PgExecutor } from './pg-executor.ts';
import { CatchUpRows, changedSql, changesAfterSql, filterRowsSql, KIND_CHANGE, loadInPages } from './pg-index-catch-up.ts';

/** Changed vectors read per round trip while a workspace loads (about 3 MB of base64 at 512 dimensions). */
/** The vector index's columns after kind and seq, as NULLs (pg-index-catch-up.ts). */
const NO_VECTOR = ', NULL AS vector';

export interface PgVectorIndexOptions {
  /** Scan worker threads (started on first use); 0 scans on the event loop. */
  threads: number;
}

export interface IndexQuery {
  vector: Float32Array;
  modelId: string;
  limit: number;
  minCosine: number;
  filter: MemoryFilter;
  /** The caller has work of its own meanwhile (hybrid ranks keywords): the scan leaves it a core. */
  callerBusy?: boolean;
}

interface Entry {
  matrix: VectorMatrix;
  /** The workspace's vector version the matrix reflects (vector_versions, migration 23); -1 while loading. */
  version: number;
  /** Set while the workspace's vectors load. */
  loading: Promise<void> | null;
}

type ChangeRow = { kind: number; seq: number | string | null; vector: string | null };

/**
 * Each node's in-memory exact vector index for PostgreSQL: per (workspace, model, width) the vectors as int8 codes
 * (VectorMatrix, scanned by the SQLite adapter's scan threads) plus their floats for the exact re-rank, loaded in pages
 * on first search. Before each search one round trip brings the matrix up to date from the change log that triggers
 * keep (vector_changes: each memory's last change, at its workspace's version; versions become visible in commit
 * order), together with the seqs the search's filter allows or its validity excludes; so a search sees every write
 * committed before it began, on any node, and the scan itself reads nothing from the database.
 */
export class PgVectorIndex {
  private readonly entries = new Map<string, Entry>();
  /**
   * Per query vector instance, the entry its latest search caught up (exactCosines): the hybrid search hands its
   * semantic leg and its candidates' scoring the same vector, and embeds each query afresh.
   */
  private readonly snapshots = new WeakMap<Float32Array, { key: string; entry: Promise<Entry | null> }>();
  private scanPool: ScanPool | null = null;
  private closed = false;

  constructor(private readonly db: PgExecutor, private readonly options: PgVectorIndexOptions) {}

  /** Best first (equal scores by seq), the exact `total` of the scope's vectors at or above `minCosine`. */
  async search(scope: Scope, q: IndexQuery): Promise<{ hits: { seq: number; cosine: number }[]; total: number }> {
    const key = keyOf(scope, q.modelId, q.vector.length);
    const caughtUp = this.caughtUp(key, scope, q);
    this.snapshots.set(q.vector, { key, entry: caughtUp.then((c) => c.entry, () => null) });
    const { entry, allowed, excluded } = await caughtUp;
    const { hits, total } = await entry.matrix.searchIn(this.pool(), q.vector, q.limit, q.minCosine, allowed,
      { callerBusy: q.callerBusy, excluded });
    return { hits: hits.map((h) => ({ seq: h.key, cosine: h.cosine })), total };
  }

  /**
   * The exact cosine of each given memory's vector to `vector` (as the scan's re-rank scores it), from the matrix as
   * the search given this very vector instance caught it up: a hybrid search's keyword-only candidates, scored from
   * the snapshot its own semantic leg searched (or a later one) — every write committed before that search began —
   * without reading their vectors from the database. Memories without a vector of the model and width are left out.
   * Null when no search of this index was given that vector, or its workspace has been reloaded since: the caller
   * reads the vectors from the database.
   */
  async exactCosines(scope: Scope, q: { vector: Float32Array; modelId: string }, seqs: readonly number[]): Promise<Map<number, number> | null> {
    const snapshot = this.snapshots.get(q.vector);
    if (!snapshot || snapshot.key !== keyOf(scope, q.modelId, q.vector.length)) return null;
    const entry = await snapshot.entry;
    if (!entry || this.entries.get(snapshot.key) !== entry) return null;
    return entry.matrix.exactCosines(q.vector, seqs);
  }

  /** The entry of `key`, loaded and brought up to date for this search, with the seqs its filter allows or excludes. */
  private async caughtUp(key: string, scope: Scope, q: IndexQuery):
    Promise<{ entry: Entry; allowed: number[] | null; excluded: Set<number> | null }> {
    const dims = q.vector.length;
    let entry = this.entries.get(key);
    if (!entry) {
      const created: Entry = { matrix: new VectorMatrix(dims), version: -1, loading: null };
      this.entries.set(key, (entry = created));
      created.loading = this.load(created, scope, q.modelId, dims).finally(() => { created.loading = null; });
    }
    if (entry.loading) {
      try {
        await entry.loading;
      } catch (err) {
        // The next search loads afresh.
        if (this.entries.get(key) === entry) this.drop(key);
        throw err;
      }
    }
    if (this.entries.get(key) !== entry) return this.caughtUp(key, scope, q); // dropped meanwhile (a reload): its successor
    const { allowed, excluded, reload } = await this.catchUp(entry, scope, q, dims);
    if (reload) {
      this.drop(key);
      return this.caughtUp(key, scope, q);
    }
    return { entry, allowed, excluded };
  }

  /**
   * Loads every (workspace, model, width) holding vectors, one after another, so that first searches find them in
   * memory (the server starts it before it listens; a search for a workspace not loaded yet loads that one at once).
   */
  async warmUp(): Promise<void> {
    this.pool();
    const held = await this.db.query<{ tenant_id: string; mode: string; workspace: string; model_id: string; dims: number }>(
      `SELECT DISTINCT m.tenant_id, m.mode, m.workspace, v.model_id, v.dims FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq`);
    for (const h of held) {
      if (this.closed) return;
      const scope: Scope = { tenantId: h.tenant_id, mode: h.mode as Scope['mode'], workspace: h.workspace };
      // A search without hits (limit 0) loads and catches up.
      await this.search(scope, { vector: new Float32Array(h.dims), modelId: h.model_id, limit: 0, minCosine: 1, filter: {} });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    await this.scanPool?.close();
  }

  private pool(): ScanPool | null {
    if (this.closed || this.options.threads <= 0) return null;
    this.scanPool ??= new ScanPool({ threads: this.options.threads });
    return this.scanPool;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    if (entry) this.scanPool?.retire(entry.matrix.id);
  }

  /** Every vector of the workspace, in pages by seq (loadInPages, yielding to the event loop between them). */
  private async load(entry: Entry, scope: Scope, modelId: string, dims: number): Promise<void> {
    entry.version = await loadInPages<ChangeRow>(this.db, scope, NO_VECTOR, (p, after, limit) => `${changesSql(p, scope, modelId, dims, 0)}
      AND c.memory_seq > ${p.add(after)} ORDER BY c.memory_seq LIMIT ${limit}`, (row) => apply(entry.matrix, row, dims));
  }

  /**
   * One round trip: the workspace's version, the changes after the matrix's (applied here when they are newer than
   * what the matrix holds meanwhile), and the seqs the filter allows (when it restricts anything) or validity excludes.
   * Unfiltered, the statement is the same text for every search of the workspace: prepared once per connection.
   */
  private async catchUp(entry: Entry, scope: Scope, q: IndexQuery, dims: number):
    Promise<{ allowed: number[] | null; excluded: Set<number> | null; reload: boolean }> {
    const from = entry.version;
    const p = new SqlParams();
    const parts = [changesAfterSql(p, 'vector_changes_after', 'kind, seq, vector', scope, [q.modelId, dims], from),
      ...filterRowsSql(p, scope, q.filter, NO_VECTOR)];
    const caught = new CatchUpRows<ChangeRow>(q.filter);
    for (const row of await this.db.query<ChangeRow>(parts.join(' UNION ALL '), p.values)) caught.add(row);
    const { allowed, excluded } = caught;
    if (caught.needsReload(from)) return { allowed, excluded, reload: true };
    // Another search's catch-up may have brought the matrix further meanwhile: then this one's changes are older.
    if (caught.version > entry.version) {
      for (const row of caught.changes) apply(entry.matrix, row, dims);
      entry.version = caught.version;
    }
    return { allowed, excluded, reload: false };
  }
}

const keyOf = (scope: Scope, modelId: string, dims: number): string =>
  `${scope.tenantId}\u0000${scope.mode}\u0000${scope.workspace}\u0000${modelId}\u0000${dims}`;

/**
 * The memories whose vectors changed after version `after`, each with its vector of the model and width as it is now
 * (pgvector's binary form in base64; NULL when gone: deleted, or re-embedded by another model or width).
 */
function changesSql(p: SqlParams, scope: Scope, modelId: string, dims: number, after: number): string {
  // A subquery per change: a primary-key probe whatever the statistics say (a join was planned as a scan of the
  // model's vectors per change on a freshly seeded table).
  return `SELECT ${KIND_CHANGE}, c.memory_seq, (SELECT encode(vector_send(v.embedding), 'base64') FROM memory_vectors v
      WHERE v.memory_seq = c.memory_seq AND v.model_id = ${p.add(modelId)} AND v.dims = ${dims})
    ${changedSql(p, scope, after)}`;
}

function apply(matrix: VectorMatrix, row: ChangeRow, dims: number): void {
  const seq = pgInt(row.seq);
  if (row.vector === null) matrix.remove(seq);
  else matrix.upsert(seq, decodeVector(row.vector, dims));
}

/** pgvector's binary form (int16 width, int16 unused, then big-endian float4s) from base64. */
export function decodeVector(base64: string, dims: number): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  const width = bytes.length >= 4 ? bytes.readInt16BE(0) : -1;
  if (width !== dims || bytes.length !== 4 + 4 * dims) throw new RangeError(`a stored vector has ${width} dimensions, not ${dims}`);
  const out = new Float32Array(dims);
  const raw = Buffer.from(out.buffer);
  bytes.copy(raw, 0, 4);
  // Big-endian on the wire; swapped in native code (a loop of DataView reads cost 10× more).
  if (IS_LITTLE_ENDIAN) raw.swap32();
  return out;
}

const IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
