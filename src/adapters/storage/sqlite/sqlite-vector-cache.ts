import type { Scope } from '../../../core/scope.ts';
import { VectorMatrix } from './vector-scan/vector-matrix.ts';
import { ScanPool } from './vector-scan/scan-pool.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { SqliteWorkspaceVersions } from './sqlite-workspace-versions.ts';

/** Rows read per statement while loading: between two batches the event loop serves requests. */
const LOAD_BATCH = 2048;
/** A search reloads at most this many times in a row when other connections keep writing while it loads. */
const MAX_RELOADS = 3;

interface Entry {
  matrix: VectorMatrix;
  /** The workspace version this matrix reflects (see SqliteWorkspaceVersions). */
  version: number;
  /** Set while rows are still streaming in. */
  loading: Promise<void> | null;
}

/**
 * Per-(scope, model) exact vector indexes, loaded from SQLite on first search (or by warmUp at start) and kept in
 * step with this process's writes. A workspace's version (bumped by triggers on any connection's writes) tells when
 * another connection changed that workspace: then that workspace's indexes alone are reloaded. Loading streams rows
 * in batches straight into the matrix, yielding to the event loop between batches.
 */
export class SqliteVectorCache {
  private readonly entries = new Map<string, Entry>();
  private readonly versions: SqliteWorkspaceVersions;
  private readonly countScope;
  private readonly loadBatch;
  private readonly workspaces;
  private readonly models;
  private readonly modelDims;
  private scanPool: ScanPool | null = null;
  private closed = false;

  /** `threads`: scan worker threads (started on first use); 0 scans on the event loop. */
  constructor(db: SqliteDb, private readonly threads = 0) {
    this.versions = new SqliteWorkspaceVersions(db);
    this.countScope = db.prepare<[string, string, string, string], number>(
      `SELECT COUNT(*) FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
       WHERE m.tenant_id = ? AND m.mode = ? AND m.workspace = ? AND v.model_id = ?`).pluck();
    // CROSS JOIN keeps memory_vectors the outer loop: a range of its rowid per batch, each memory found by its key.
    this.loadBatch = db.prepare<[number, string, string, string, string, number], { memory_seq: number; dims: number; vector: Buffer }>(
      `SELECT v.memory_seq, v.dims, v.vector FROM memory_vectors v CROSS JOIN memories m ON m.seq = v.memory_seq
       WHERE v.memory_seq > ? AND m.tenant_id = ? AND m.mode = ? AND m.workspace = ? AND v.model_id = ?
       ORDER BY v.memory_seq LIMIT ?`);
    // Cheap on purpose (warm-up runs right after `listening on`): the workspaces from their version table, the models
    // from memory_vectors' model_id index, one row for each model's width.
    this.workspaces = db.prepare<[], { tenant_id: string; mode: string; workspace: string }>(
      'SELECT tenant_id, mode, workspace FROM workspace_versions');
    this.models = db.prepare<[], string>('SELECT DISTINCT model_id FROM memory_vectors').pluck();
    this.modelDims = db.prepare<[string], number>('SELECT dims FROM memory_vectors WHERE model_id = ? LIMIT 1').pluck();
  }

  /** The scan pool, started on first use (null when scanning on the event loop). */
  pool(): ScanPool | null {
    if (this.closed) return null;
    if (this.threads > 0 && !this.scanPool) this.scanPool = new ScanPool({ threads: this.threads });
    return this.scanPool;
  }

  /** The index for a scope and model, current with every committed write, loading it if needed. */
  async get(scope: Scope, modelId: string, dims: number): Promise<VectorMatrix> {
    const key = cacheKey(scope, modelId);
    for (let attempt = 0; ; attempt++) {
      let entry = this.entries.get(key);
      if (entry?.loading) await entry.loading;
      entry = this.entries.get(key);
      const version = this.versions.of(scope);
      if (entry && entry.matrix.dims === dims && (entry.version === version || attempt >= MAX_RELOADS)) return entry.matrix;
      if (entry?.loading) continue; // another search started the reload: wait for it
      this.load(scope, modelId, dims, key);
    }
  }

  /**
   * Loads every (workspace, model) holding vectors, in the background (the server calls it at start
   * so that the first search does not pay for the load); starts the scan threads too.
   */
  async warmUp(): Promise<void> {
    this.pool();
    const models = this.models.all().map((model) => ({ model, dims: this.modelDims.get(model) ?? 0 }));
    for (const w of this.workspaces.all()) {
      const scope: Scope = { tenantId: w.tenant_id, mode: w.mode as Scope['mode'], workspace: w.workspace };
      for (const { model, dims } of models) {
        if (this.closed) return;
        const matrix = await this.get(scope, model, dims);
        // Nothing of that model there: not worth an entry (a search would create it again, cheaply).
        if (matrix.size === 0) this.entries.delete(cacheKey(scope, model));
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  /** Called after a committed write of this process. */
  upsert(scope: Scope, modelId: string, seq: number, vector: Float32Array): void {
    // A vector of another model replaces the old one: drop the seq from every model's index of this scope.
    this.remove(scope, seq);
    const key = cacheKey(scope, modelId);
    const entry = this.entries.get(key);
    if (entry && entry.matrix.dims === vector.length) entry.matrix.upsert(seq, vector);
    else if (entry) this.entries.delete(key);
  }

  remove(scope: Scope, seq: number): void {
    const prefix = scopePrefix(scope);
    for (const [key, entry] of this.entries) if (key.startsWith(prefix)) entry.matrix.remove(seq);
  }

  /**
   * This process committed a write to `scope`, which moved its version from `before` to `after` (both read inside
   * that write's transaction) and applied it to the indexes (upsert / remove). An index that had seen `before` is
   * current at `after`; one that had not missed another connection's write and is reloaded on its next search.
   */
  noteWrite(scope: Scope, before: number, after: number): void {
    const prefix = scopePrefix(scope);
    for (const [key, entry] of this.entries) if (key.startsWith(prefix) && entry.version === before) entry.version = after;
  }

  clear(): void {
    this.entries.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    await this.scanPool?.close();
  }

  private load(scope: Scope, modelId: string, dims: number, key: string): void {
    const version = this.versions.of(scope);
    const rows = this.countScope.get(scope.tenantId, scope.mode, scope.workspace, modelId) ?? 0;
    const entry: Entry = { matrix: new VectorMatrix(dims, Math.max(64, rows)), version, loading: null };
    this.entries.set(key, entry);
    entry.loading = this.fill(entry, scope, modelId, key).finally(() => { entry.loading = null; });
  }

  /**
   * Streams the scope's vectors into the entry's matrix, batch by batch: each row's blob is read in place (no copy
   * unless misaligned). Writes of this process made meanwhile reach the matrix through upsert/remove; a batch read
   * after them reads what they committed.
   */
  private async fill(entry: Entry, scope: Scope, modelId: string, key: string): Promise<void> {
    const { matrix } = entry;
    let after = 0;
    for (;;) {
      if (this.closed || this.entries.get(key) !== entry) return;
      let n = 0;
      for (const row of this.loadBatch.iterate(after, scope.tenantId, scope.mode, scope.workspace, modelId, LOAD_BATCH)) {
        n++;
        after = row.memory_seq;
        if (row.dims !== matrix.dims) continue;
        matrix.upsert(row.memory_seq, floatView(row.vector, row.dims));
      }
      if (n < LOAD_BATCH) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/** The blob's floats without a copy when its bytes are 4-aligned (they are in better-sqlite3's buffers). */
function floatView(blob: Buffer, dims: number): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, dims);
  const copy = new Float32Array(dims);
  new Uint8Array(copy.buffer).set(blob.subarray(0, dims * 4));
  return copy;
}

const scopePrefix = (s: Scope): string => `${s.tenantId}\u0000${s.mode}\u0000${s.workspace}\u0000`;
const cacheKey = (s: Scope, modelId: string): string => scopePrefix(s) + modelId;
