import type { MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { AllowedKeys, KeyBitmap } from './vector-scan/allowed-keys.ts';

/** Bytes of prefilter results (the seqs' bitmap, 1 per mask row) kept at most, over every workspace. */
const DEFAULT_BUDGET_BYTES = 64 * 1024 * 1024;

/**
 * How far behind a cached result is brought forward by re-checking the memories written since (filter versions):
 * up to one per CHANGES_PER_KEPT seqs it keeps (at least MIN_CHANGES_APPLIED, at most MAX_CHANGES_APPLIED: the change
 * log keeps the newest 2,048 versions at least, migration 23); further behind, the filter is read again. At 100k a
 * re-check cost 1-5 µs a memory (its rows read by primary key, more when they are not in the page cache), reading a
 * filter's seqs 0.3-0.5 µs a seq: so far behind, both cost about the same (bench/search/filter-recheck-cost.ts).
 */
export const MAX_CHANGES_APPLIED = 2048;
const MIN_CHANGES_APPLIED = 64;
const CHANGES_PER_KEPT = 1 / 16;

/** Which of `seqs` (memories of the scope changed since a result was kept) `filter` keeps now. */
export type FilterRecheck = (scope: Scope, filter: MemoryFilter, seqs: readonly number[]) => readonly number[];

interface Entry {
  version: number;
  seqs: KeyBitmap;
  allowed: AllowedKeys;
  /** The mask's bytes (one a matrix row), and the whole entry's. */
  maskBytes: number;
  bytes: number;
}

/** One filter's lookup: the cached keys when still valid, else `fill` stores what the caller computed. */
export interface FilterCacheLookup {
  allowed: AllowedKeys | null;
  fill(seqs: KeyBitmap | ArrayLike<number>, matrixRows: number): AllowedKeys;
}

/**
 * The seqs similarity prefilters kept (as a bitmap, and the scan mask built from it, AllowedKeys), per workspace and
 * filter, at the workspace's filter version they reflect (migration 22: triggers move it on with every write, from any
 * connection, that can change what a filter keeps). A repeated filter costs its search no SQL; one whose workspace
 * was written to since re-checks only the memories those writes changed (the change log, migration 23) and patches
 * its bitmap, instead of reading its seqs again (a 50 % tag filter's read at 100k cost twice the unfiltered search).
 * Least recently used results go first past the byte budget. Validity (MemoryFilter.validAt) is not part of the key:
 * searches leave the memories not valid at their moment out apart.
 */
export class SqliteFilterCache {
  private readonly entries = new Map<string, Entry>();
  private readonly version;
  private readonly changes;
  private bytes = 0;

  constructor(db: SqliteDb, private readonly recheck: FilterRecheck, private readonly budgetBytes = DEFAULT_BUDGET_BYTES) {
    this.version = db.prepare<[string, string, string], number>(
      'SELECT version FROM workspace_filter_versions WHERE tenant_id = ? AND mode = ? AND workspace = ?').pluck();
    this.changes = db.prepare<[string, string, string, number, number], number>(
      `SELECT memory_seq FROM workspace_filter_changes WHERE tenant_id = ? AND mode = ? AND workspace = ?
       AND version > ? AND version <= ?`).pluck();
  }

  /**
   * Reads the workspace's filter version now, before the caller computes anything: a write committed meanwhile
   * moves the version past the one a result is stored under, so a result is never kept under a later version
   * than the state it read (a re-check that sees a later state is harmless: the next one checks those rows again).
   */
  lookup(scope: Scope, filter: MemoryFilter): FilterCacheLookup {
    const key = cacheKey(scope, filter);
    const version = this.version.get(scope.tenantId, scope.mode, scope.workspace) ?? 0;
    const entry = this.entries.get(key);
    if (entry && (entry.version === version || this.bringForward(entry, scope, filter, version))) {
      // Most recently used last (Map order is insertion order); a bitmap grown by new seqs may push older ones out.
      this.entries.delete(key);
      this.entries.set(key, entry);
      this.trim();
      return { allowed: entry.allowed, fill: () => entry.allowed };
    }
    this.forget(key);
    return {
      allowed: null,
      fill: (seqs, matrixRows) => {
        const bitmap = seqs instanceof KeyBitmap ? seqs : KeyBitmap.of(seqs);
        const allowed = new AllowedKeys(bitmap);
        this.forget(key);
        const bytes = bitmap.bytes + matrixRows;
        if (bytes <= this.budgetBytes / 4) {
          this.entries.set(key, { version, seqs: bitmap, allowed, maskBytes: matrixRows, bytes });
          this.bytes += bytes;
          this.trim();
        }
        return allowed;
      },
    };
  }

  /** What `filter` keeps as cached, brought forward to the workspace's filter version now; null when not cached. */
  seqsOf(scope: Scope, filter: MemoryFilter): KeyBitmap | null {
    const { allowed } = this.lookup(scope, filter);
    return allowed && allowed.keys instanceof KeyBitmap ? allowed.keys : null;
  }

  /**
   * Applies the writes between the entry's version and `version` to it (false for an entry too far behind, or a range
   * the log does not hold whole: the caller reads the filter again). The mask is built anew on the next scan: one
   * pass over the matrix's keys (KeyBitmap.maskOf), which any new row would have required anyway.
   */
  private bringForward(entry: Entry, scope: Scope, filter: MemoryFilter, version: number): boolean {
    const behind = version - entry.version;
    const limit = Math.min(MAX_CHANGES_APPLIED, Math.max(MIN_CHANGES_APPLIED, entry.seqs.size * CHANGES_PER_KEPT));
    if (behind <= 0 || behind > limit) return false;
    const changed = this.changes.all(scope.tenantId, scope.mode, scope.workspace, entry.version, version);
    if (changed.length !== behind) return false;
    const seqs = [...new Set(changed)];
    const kept = new Set(this.recheck(scope, filter, seqs));
    for (const seq of seqs) {
      if (kept.has(seq)) entry.seqs.add(seq);
      else entry.seqs.delete(seq);
    }
    entry.allowed = new AllowedKeys(entry.seqs);
    entry.version = version;
    const bytes = entry.seqs.bytes + entry.maskBytes;
    this.bytes += bytes - entry.bytes;
    entry.bytes = bytes;
    return true;
  }

  private trim(): void {
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.forget(oldest);
    }
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

/** The workspace and what the filter keeps (validAt left out); equal filters written alike share an entry. */
function cacheKey(scope: Scope, filter: MemoryFilter): string {
  const { validAt: _validAt, ...kept } = filter;
  return JSON.stringify([scope.tenantId, scope.mode, scope.workspace, kept]);
}
