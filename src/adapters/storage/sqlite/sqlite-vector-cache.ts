import type { Scope } from '../../../core/scope.ts';
import { VectorMatrix } from './vector-scan/vector-matrix.ts';
import { ScanPool } from './vector-scan/scan-pool.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { SqliteVectorLoader, WORKER_LOAD_ABOVE } from './sqlite-vector-loader.ts';
import { SqliteWorkspaceVersions } from './sqlite-workspace-versions.ts';
import { storedVectors } from './sqlite-stored-vectors.ts';
import { SqliteVectorSnapshots } from './sqlite-vector-snapshots.ts';

/** A search reloads at most this many times in a row when other connections keep writing while it loads. */
const MAX_RELOADS = 3;
/**
 * How long closing waits for snapshots being written before it abandons them (the next start then reads the floats):
 * well inside the server's default shutdown timeout of 10 s; a 1M-row snapshot (1 GB) takes a few seconds to write.
 */
const CLOSE_SNAPSHOT_WAIT_MS = 6000;
/** A workspace's index is saved again this long after its last delete (a 1M-row file is 1 GB). */
const RESAVE_AFTER_MS = 60_000;

/** A write of this process to a workspace whose index is loading, replayed onto the loaded rows in order. */
type Replay =
  | { kind: 'upsert'; seq: number; vector: Float32Array }
  | { kind: 'remove'; seq: number }
  | { kind: 'note'; before: number; after: number };

interface Entry {
  dims: number;
  /** Null until the load ends. */
  matrix: VectorMatrix | null;
  /** The workspace version this matrix reflects (see SqliteWorkspaceVersions). */
  version: number;
  /** Set while the rows load. */
  loading: Promise<void> | null;
  /** While loading: this process's writes to the workspace meanwhile, in commit order. */
  replay: Replay[] | null;
  /** The version of the snapshot on disk that holds this matrix (loaded from it or saved), -1 for none. */
  savedVersion: number;
}

export interface SqliteVectorCacheOptions {
  /** Scan worker threads (started on first use); 0 scans on the event loop. */
  threads?: number;
  /** Floats above which a workspace loads in a worker thread (see SqliteVectorLoader). */
  workerLoadAbove?: number;
  /** Reads a workspace's rows (default: a SqliteVectorLoader on this connection; tests wrap it to time writes). */
  loader?: VectorRowsLoader;
  /**
   * Floats (rows × dims) from which an index is persisted beside a store file (sqlite-vector-snapshots.ts) after a
   * load from the floats and when the store closes; Infinity: never. Default: what loads in a worker thread.
   */
  snapshotAbove?: number;
  /** How long after a delete a workspace's index is saved again (see forgotten). */
  resaveAfterMs?: number;
}

export type VectorRowsLoader = Pick<SqliteVectorLoader, 'load' | 'close' | 'workerLoads'>;

/**
 * Per-(scope, model) exact vector indexes, loaded from SQLite on first search (or by warmUp at start) and kept in
 * step with this process's writes. A workspace's version (bumped by triggers on any connection's writes) tells when
 * another connection changed that workspace: then that workspace's indexes alone are reloaded. A load reads the rows
 * straight into the matrix's shared memory, in a worker thread for big workspaces (SqliteVectorLoader), as int8 codes
 * only: a search re-ranks its few undecided rows from the vectors in the store (the scan threads on their own read-only
 * connections; the event loop, on this connection, only when a thread cannot, see vector-scan/rerank.ts); this
 * process's writes to that workspace meanwhile are kept and replayed onto the loaded rows, and the version the load
 * read in its snapshot is moved on by those writes alone, so a write during a load is never lost and a foreign one
 * still causes a reload.
 */
export class SqliteVectorCache {
  private readonly entries = new Map<string, Entry>();
  private readonly versions: SqliteWorkspaceVersions;
  private readonly loader: VectorRowsLoader;
  private readonly threads: number;
  private readonly workspaces;
  private readonly models;
  private readonly modelDims;
  private scanPool: ScanPool | null = null;
  private closed = false;
  private readonly snapshots: SqliteVectorSnapshots | null;
  private readonly snapshotAbove: number;
  /** Snapshots being written, one after another (a file is written by one save at a time). */
  private saving: Promise<void> = Promise.resolve();
  /** Abandons the snapshots being written (closing took too long). */
  private readonly abandon = new AbortController();
  /** Saves due after deletes (see forgotten), by scope prefix. */
  private readonly resaves = new Map<string, NodeJS.Timeout>();
  private readonly resaveAfterMs: number;

  constructor(private readonly db: SqliteDb, options: SqliteVectorCacheOptions = {}) {
    this.threads = options.threads ?? 0;
    this.versions = new SqliteWorkspaceVersions(db);
    // Two loader threads from two scan threads (cores) on: they run below the event loop's priority
    // (background-priority.ts), so the routes compiling at start keep a core, and they take both once it listens.
    this.loader = options.loader ?? new SqliteVectorLoader(db, {
      workerAbove: options.workerLoadAbove ?? WORKER_LOAD_ABOVE, threads: Math.min(2, Math.max(1, this.threads)),
    });
    // Cheap on purpose (warm-up starts with the server): the workspaces from their version table, the models
    // from memory_vectors' model_id index, one row for each model's width.
    this.workspaces = db.prepare<[], { tenant_id: string; mode: string; workspace: string }>(
      'SELECT tenant_id, mode, workspace FROM workspace_versions');
    this.models = db.prepare<[], string>('SELECT DISTINCT model_id FROM memory_vectors').pluck();
    this.modelDims = db.prepare<[string], number>('SELECT dims FROM memory_vectors WHERE model_id = ? LIMIT 1').pluck();
    this.snapshotAbove = options.snapshotAbove ?? WORKER_LOAD_ABOVE;
    this.resaveAfterMs = options.resaveAfterMs ?? RESAVE_AFTER_MS;
    this.snapshots = Number.isFinite(this.snapshotAbove) && SqliteVectorSnapshots.usable(db) ? new SqliteVectorSnapshots(db) : null;
  }

  /** Loads run in worker threads so far (for tests). */
  get workerLoads(): number {
    return this.loader.workerLoads;
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
      if (entry?.matrix && entry.dims === dims && (entry.version === version || attempt >= MAX_RELOADS)) return entry.matrix;
      if (entry?.loading) continue; // another search started the reload: wait for it
      this.load(scope, modelId, dims, key);
    }
  }

  /**
   * The index for a scope and model if it is loaded, of that width and current with every committed write (another
   * connection's included); else null, and nothing is loaded. For answers that must not come from an index that
   * could lag the store (cosine estimates: a stale row's codes would not bound its stored vector).
   */
  current(scope: Scope, modelId: string, dims: number): VectorMatrix | null {
    const entry = this.entries.get(cacheKey(scope, modelId));
    return entry?.matrix && !entry.loading && entry.dims === dims && entry.version === this.versions.of(scope) ? entry.matrix : null;
  }

  /**
   * Loads every (workspace, model) holding vectors, in the background (the server starts it before it listens, so
   * that the first search does not pay for the load); starts the scan threads too. A search for a workspace not
   * loaded yet loads that one at once, beside this.
   */
  async warmUp(): Promise<void> {
    this.pool();
    const models = this.models.all().map((model) => ({ model, dims: this.modelDims.get(model) ?? 0 }));
    for (const w of this.workspaces.all()) {
      const scope: Scope = { tenantId: w.tenant_id, mode: w.mode as Scope['mode'], workspace: w.workspace };
      for (const { model, dims } of models) {
        if (this.closed) return;
        let matrix: VectorMatrix;
        try {
          matrix = await this.get(scope, model, dims);
        } catch (err) {
          if (this.closed) return; // closed mid-load (shutdown): nothing to report
          throw err;
        }
        // Nothing of that model there: not worth an entry (a search would create it again, cheaply).
        if (matrix.size === 0) this.drop(cacheKey(scope, model));
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
    if (!entry) return;
    // A vector of another width than the index's: the index is dropped (a search loads the width it asks for).
    if (entry.dims !== vector.length) this.drop(key);
    else if (entry.replay) entry.replay.push({ kind: 'upsert', seq, vector: Float32Array.from(vector) });
    else entry.matrix?.upsert(seq, vector);
  }

  remove(scope: Scope, seq: number): void {
    const prefix = scopePrefix(scope);
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      if (entry.replay) entry.replay.push({ kind: 'remove', seq });
      else entry.matrix?.remove(seq);
    }
  }

  /**
   * This process committed a write to `scope`, which moved its version from `before` to `after` (both read inside
   * that write's transaction) and applied it to the indexes (upsert / remove). An index that had seen `before` is
   * current at `after`; one that had not missed another connection's write and is reloaded on its next search.
   */
  noteWrite(scope: Scope, before: number, after: number): void {
    const prefix = scopePrefix(scope);
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      if (entry.replay) entry.replay.push({ kind: 'note', before, after });
      else if (entry.version === before) entry.version = after;
    }
  }

  /**
   * This process committed the delete of memories of `scope` (after remove and noteWrite): no snapshot on disk may
   * keep their codes. The scope's snapshot files go now, and again after a save already under way (it may write one);
   * each index of the scope that is current is saved again `resaveAfterMs` after the last delete (or at close), so
   * that the next start still reads codes without rewriting a big file at every delete.
   */
  forgotten(scope: Scope): void {
    const snapshots = this.snapshots;
    if (!snapshots) return;
    // The delete has committed: a failure here must not fail it. The discard queued after the saves tries again.
    try {
      snapshots.discard(scope);
    } catch {
      // Retried below.
    }
    this.saving = this.saving.then(() => snapshots.discard(scope)).catch(() => undefined);
    const prefix = scopePrefix(scope);
    for (const [key, entry] of this.entries) if (key.startsWith(prefix)) entry.savedVersion = -1;
    const waiting = this.resaves.get(prefix);
    if (waiting) clearTimeout(waiting);
    const timer = setTimeout(() => {
      this.resaves.delete(prefix);
      for (const [key, entry] of this.entries) if (key.startsWith(prefix)) this.saveSnapshot(entry, scope, modelOf(key));
    }, this.resaveAfterMs);
    timer.unref();
    this.resaves.set(prefix, timer);
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.drop(key);
  }

  /**
   * Saves every index that is current and bigger than `snapshotAbove` but not on disk as it is now (the store is
   * closing: the next start reads them back instead of quantising the floats), waiting for those being written at
   * most CLOSE_SNAPSHOT_WAIT_MS, then ends the threads.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.resaves.values()) clearTimeout(timer);
    this.resaves.clear();
    for (const [key, entry] of this.entries) this.saveSnapshot(entry, scopeOf(key), modelOf(key));
    const timer = setTimeout(() => this.abandon.abort(), CLOSE_SNAPSHOT_WAIT_MS);
    await this.saving;
    clearTimeout(timer);
    this.entries.clear();
    await Promise.all([this.loader.close(), this.scanPool?.close()]);
  }

  /** Forgets an index; the scan threads let go of its memory (a search still holding it finishes as it was). */
  private drop(key: string): void {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    if (entry?.matrix) this.scanPool?.retire(entry.matrix.id);
  }

  private load(scope: Scope, modelId: string, dims: number, key: string): void {
    const entry: Entry = { dims, matrix: null, version: -1, loading: null, replay: [], savedVersion: -1 };
    this.drop(key);
    this.entries.set(key, entry);
    entry.loading = this.fill(entry, scope, modelId, dims, key).then(
      (fromFloats) => {
        entry.loading = null;
        if (fromFloats) this.saveSnapshot(entry, scope, modelId);
      },
      (err: unknown) => {
        entry.loading = null;
        entry.replay = null;
        if (this.entries.get(key) === entry) this.entries.delete(key);
        throw err;
      });
  }

  /**
   * Reads the rows (from the workspace's snapshot while it is current, else from the floats, in a worker for big
   * workspaces; true then), then replays onto them this process's writes made meanwhile:
   * each write is applied again in commit order (a write the load had already seen leaves the row as it was), and
   * the version read with the rows moves on through those writes' (before, after) pairs.
   */
  private async fill(entry: Entry, scope: Scope, modelId: string, dims: number, key: string): Promise<boolean> {
    // A snapshot that fails its checks (or cannot be read) is as none: the floats are read.
    const snapshot = await this.snapshots?.load(scope, modelId, dims).catch(() => null) ?? null;
    const loaded = snapshot ?? await this.loader.load(scope, modelId, dims);
    if (this.closed || this.entries.get(key) !== entry) return false;
    const matrix = VectorMatrix.fromRows(dims, loaded.rows, loaded.count, storedVectors(this.db, modelId, dims));
    let version = loaded.version;
    for (const op of entry.replay ?? []) {
      if (op.kind === 'upsert') matrix.upsert(op.seq, op.vector);
      else if (op.kind === 'remove') matrix.remove(op.seq);
      else if (version === op.before) version = op.after;
    }
    entry.matrix = matrix;
    entry.version = version;
    entry.replay = null;
    if (snapshot) entry.savedVersion = snapshot.version;
    return !snapshot;
  }

  /** Resolves once the snapshots queued so far are written (or failed). */
  snapshotsWritten(): Promise<void> {
    return this.saving;
  }

  /**
   * Queues a save of the entry's matrix when it is big enough, current (no other connection wrote since it was read)
   * and not saved at this version yet. A failed save only costs the next start a load from the floats.
   */
  private saveSnapshot(entry: Entry, scope: Scope, modelId: string): void {
    const { matrix, version } = entry;
    if (!this.snapshots || !matrix || entry.loading || matrix.size * matrix.dims < this.snapshotAbove) return;
    if (entry.savedVersion === version || version !== this.versions.of(scope)) return;
    entry.savedVersion = version;
    const snapshots = this.snapshots;
    this.saving = this.saving.then(async () => {
      // Still the version the matrix reflects: a write since would make the file stale before it is used.
      if (this.abandon.signal.aborted || version !== this.versions.of(scope) || entry.version !== version ||
        !await snapshots.save(scope, modelId, matrix, version, this.abandon.signal)) {
        entry.savedVersion = -1;
      }
    }).catch(() => { entry.savedVersion = -1; });
  }
}

const scopeOf = (key: string): Scope => {
  const [tenantId, mode, workspace] = key.split('\u0000');
  return { tenantId: tenantId!, mode: mode as Scope['mode'], workspace: workspace! };
};
const modelOf = (key: string): string => key.split('\u0000').slice(3).join('\u0000');

const scopePrefix = (s: Scope): string => `${s.tenantId}\u0000${s.mode}\u0000${s.workspace}\u0000`;
const cacheKey = (s: Scope, modelId: string): string => scopePrefix(s) + modelId;
