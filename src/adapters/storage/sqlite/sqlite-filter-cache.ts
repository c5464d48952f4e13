import type { MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { AllowedKeys } from './vector-scan/allowed-keys.ts';

/** Bytes of prefilter results (8 per seq, 1 per mask row) kept at most, over every workspace. */
const DEFAULT_BUDGET_BYTES = 64 * 1024 * 1024;

interface Entry {
  version: number;
  allowed: AllowedKeys;
  bytes: number;
}

/** One filter's lookup: the cached keys when still valid, else `fill` stores what the caller computed. */
export interface FilterCacheLookup {
  allowed: AllowedKeys | null;
  fill(seqs: readonly number[], matrixRows: number): AllowedKeys;
}

/**
 * The seqs similarity prefilters kept (and the scan mask built from them, AllowedKeys), per workspace and filter,
 * valid while the workspace's filter version stands (migration 22: triggers move it on with every write, from any
 * connection, that can change what a filter keeps). A repeated filter then costs its search no SQL and no mask: at
 * 100k a 50 % tag filter spent ~14 ms reading its seqs and building the mask, twice the unfiltered search
 * (BENCHMARKS.md). Least recently used results go first past the byte budget. Validity (MemoryFilter.validAt) is not
 * part of the key: searches leave the memories not valid at their moment out apart.
 */
export class SqliteFilterCache {
  private readonly entries = new Map<string, Entry>();
  private readonly version;
  private bytes = 0;

  constructor(db: SqliteDb, private readonly budgetBytes = DEFAULT_BUDGET_BYTES) {
    this.version = db.prepare<[string, string, string], number>(
      'SELECT version FROM workspace_filter_versions WHERE tenant_id = ? AND mode = ? AND workspace = ?').pluck();
  }

  /**
   * Reads the workspace's filter version now, before the caller computes anything: a write committed meanwhile
   * moves the version past the one a result is stored under, so a result is never kept under a later version
   * than the state it read.
   */
  lookup(scope: Scope, filter: MemoryFilter): FilterCacheLookup {
    const key = cacheKey(scope, filter);
    const version = this.version.get(scope.tenantId, scope.mode, scope.workspace) ?? 0;
    const entry = this.entries.get(key);
    if (entry && entry.version === version) {
      // Most recently used last (Map order is insertion order).
      this.entries.delete(key);
      this.entries.set(key, entry);
      return { allowed: entry.allowed, fill: () => entry.allowed };
    }
    return {
      allowed: null,
      fill: (seqs, matrixRows) => {
        const allowed = new AllowedKeys(Float64Array.from(seqs));
        this.forget(key);
        const bytes = seqs.length * 8 + matrixRows;
        if (bytes <= this.budgetBytes / 4) {
          this.entries.set(key, { version, allowed, bytes });
          this.bytes += bytes;
          for (const [oldest] of this.entries) {
            if (this.bytes <= this.budgetBytes) break;
            this.forget(oldest);
          }
        }
        return allowed;
      },
    };
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
