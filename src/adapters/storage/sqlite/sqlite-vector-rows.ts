import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { allocateRows, blockRowsFor, copyRows, layoutFor, viewsOf, writeRow, type MatrixRows } from './vector-scan/matrix-storage.ts';
import { SqliteWorkspaceVersions } from './sqlite-workspace-versions.ts';

/** A workspace's vectors of one model as matrix rows, and the workspace version they reflect. */
export interface ScopeRows {
  rows: MatrixRows;
  count: number;
  /** workspace_versions.version when the rows were read; -1 when they may be incomplete (the next search reloads). */
  version: number;
}

/** Room left past the rows loaded, so that the first writes after a load do not reallocate (untouched: no memory). */
export const spareRows = (count: number): number => Math.max(64, count + (count >> 4));

/**
 * Where one filler writes: `rows` shared by up to two fillers (loader threads) reading disjoint seq ranges. The first
 * `planned` rows (the count when the load was planned) are filled from both ends, the first filler from row 0 up and
 * the second from row planned − 1 down; every row claims a slot on the shared counter first, so that the two never
 * meet, and rows past `planned` (written meanwhile) take the slots after it in claim order.
 */
export interface RowTarget {
  rows: MatrixRows;
  planned: number;
  /** One Int32 in shared memory: slots claimed by every filler so far. */
  claimed: SharedArrayBuffer;
  downward: boolean;
}

export interface FilledPart {
  /** Rows this filler wrote inside [0, planned). */
  inPlanned: number;
  /** workspace_versions.version, read in the filler's snapshot. */
  version: number;
  /** More rows than the buffers hold: some were left out. */
  truncated: boolean;
}

/** memory_seq >= from and < to: a filler's share of the workspace. */
export type SeqRange = readonly [from: number, to: number];
export const ALL_SEQS: SeqRange = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];

/**
 * Reads every vector of `modelId` and width `dims` in `scope` whose seq is in `range` straight into the target's
 * shared rows: each BLOB is read in place and written normalised and quantised (writeRow, as an upsert would), and no
 * per-row object outlives its step. Runs in a loader thread on its own read-only connection
 * (sqlite-vector-load-worker.ts), or here for small workspaces; inside one read transaction, so the version and the
 * rows agree.
 */
export function fillRows(db: SqliteDb, scope: Scope, modelId: string, dims: number, range: SeqRange, target: RowTarget): FilledPart {
  return inReadTransaction(db, () => {
    const version = new SqliteWorkspaceVersions(db).of(scope);
    const layout = layoutFor(dims, target.rows.blockRows);
    const views = viewsOf(target.rows);
    const claimed = new Int32Array(target.claimed);
    const { planned, downward } = target;
    const capacity = target.rows.capacity;
    let inPlanned = 0;
    let truncated = false;
    // memory_vectors drives (CROSS JOIN), in key order within the seq range; each memory found by its seq for the
    // scope check.
    const select = db.prepare<[string, string, string, string, number, number], [number, number, Buffer]>(
      `SELECT v.memory_seq, v.dims, v.vector FROM memory_vectors v CROSS JOIN memories m ON m.seq = v.memory_seq
       WHERE m.tenant_id = ? AND m.mode = ? AND m.workspace = ? AND v.model_id = ? AND v.memory_seq >= ? AND v.memory_seq < ?`).raw(true);
    for (const [seq, width, blob] of select.iterate(scope.tenantId, scope.mode, scope.workspace, modelId, range[0], range[1])) {
      if (width !== dims) continue;
      const slot = Atomics.add(claimed, 0, 1);
      if (slot >= capacity) {
        truncated = true;
        break;
      }
      let row = slot;
      if (slot < planned) row = downward ? planned - 1 - inPlanned++ : inPlanned++;
      writeRow(layout, views, row, seq, floatView(blob, dims));
    }
    return { inPlanned, version, truncated };
  });
}

/**
 * Joins what the fillers wrote into rows [0, count): the bottom filler's rows, the top filler's (which end at row
 * planned − 1), and the rows past `planned`. When rows were deleted between planning and reading, the two blocks do
 * not meet: the top rows above the total move down into the gap (as many as were deleted).
 */
export function joinParts(dims: number, target: RowTarget, bottom: number, top: number): number {
  const claimed = Math.min(Atomics.load(new Int32Array(target.claimed), 0), target.rows.capacity);
  const { planned } = target;
  if (claimed >= planned) return claimed;
  const from = Math.max(planned - top, claimed);
  const moved = planned - from;
  if (moved > 0) copyRowsOf(dims, target.rows, from, bottom, moved);
  return claimed;
}

/** A planned load: the shared rows, and the seq range and target of each filler. */
export interface LoadPlan {
  rows: MatrixRows;
  ranges: SeqRange[];
  targets: RowTarget[];
}

/**
 * Plans a load of `count` rows whose seqs run from lo to hi: rows allocated once (with spare room, or `capacity`),
 * and with `threads` ≥ 2 two fillers split at the middle seq (rows written since have higher seqs and go to the
 * second), each filling the shared rows from its end; else one filler for every seq.
 */
export function planLoad(dims: number, count: number, lo: number, hi: number, threads: number, capacity = spareRows(count)): LoadPlan {
  const rows = allocateRows(layoutFor(dims, blockRowsFor(capacity)), capacity);
  const planned = Math.min(count, rows.capacity);
  const claimed = new SharedArrayBuffer(4);
  const mid = Math.floor(lo + (hi - lo) / 2) + 1;
  const ranges: SeqRange[] = threads >= 2 && hi > lo ? [[ALL_SEQS[0], mid], [mid, ALL_SEQS[1]]] : [ALL_SEQS];
  const targets = ranges.map((_, i): RowTarget => ({ rows, planned, claimed, downward: i === 1 }));
  return { rows, ranges, targets };
}

/** Version, count and rows of a workspace read here, in one go (small workspaces, in-memory stores). */
export function readScopeRows(db: SqliteDb, scope: Scope, modelId: string, dims: number): ScopeRows {
  return inReadTransaction(db, () => {
    const planned = scopeVectorStats(db).get(scope.tenantId, scope.mode, scope.workspace, modelId)?.n ?? 0;
    const target: RowTarget = {
      rows: allocateRows(layoutFor(dims, blockRowsFor(spareRows(planned))), spareRows(planned)), planned, claimed: new SharedArrayBuffer(4), downward: false,
    };
    const part = fillRows(db, scope, modelId, dims, ALL_SEQS, target);
    return { rows: target.rows, count: joinParts(dims, target, part.inPlanned, 0), version: part.truncated ? -1 : part.version };
  });
}

/**
 * How many vectors of a model a workspace holds (all widths), with the lowest and highest seq: from the scope index
 * of memories and the primary key of memory_vectors, both covering, so no row is read.
 */
export function scopeVectorStats(db: SqliteDb) {
  return db.prepare<[string, string, string, string], { n: number; lo: number | null; hi: number | null }>(
    `SELECT COUNT(*) AS n, MIN(m.seq) AS lo, MAX(m.seq) AS hi FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq
     WHERE m.tenant_id = ? AND m.mode = ? AND m.workspace = ? AND v.model_id = ?`);
}

function inReadTransaction<T>(db: SqliteDb, read: () => T): T {
  return db.inTransaction ? read() : db.transaction(read).deferred();
}

function copyRowsOf(dims: number, rows: MatrixRows, from: number, to: number, count: number): void {
  copyRows(layoutFor(dims, rows.blockRows), viewsOf(rows), from, to, count);
}

/** The blob's floats without a copy when its bytes are 4-aligned (they are in better-sqlite3's buffers). */
export function floatView(blob: Buffer, dims: number): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, dims);
  const copy = new Float32Array(dims);
  new Uint8Array(copy.buffer).set(blob.subarray(0, dims * 4));
  return copy;
}
