import type { KeyMode, Scope } from '../scope.ts';
import type { Memory, StoredVector } from './memory.types.ts';

/**
 * Operator work on memories across scopes (`mnemo reindex`, `mnemo import`, `/health`): never on a request path,
 * never reachable from a surface. Every adapter implements it as part of its memory repository, so that its in-process
 * indexes (SQLite's vector matrices and keyword lengths) follow these writes too.
 */

/** Which scopes an operator command covers; a field left out matches every value. */
export interface ScopeFilter {
  tenantId?: string | undefined;
  mode?: KeyMode | undefined;
  workspace?: string | undefined;
}

export const matchesScopeFilter = (filter: ScopeFilter, scope: Scope): boolean =>
  (filter.tenantId === undefined || filter.tenantId === scope.tenantId)
  && (filter.mode === undefined || filter.mode === scope.mode)
  && (filter.workspace === undefined || filter.workspace === scope.workspace);

/** How many memories a set of scopes holds, and how many of them have a vector of each model. */
export interface VectorCoverage {
  memories: number;
  models: { modelId: string; dims: number; vectors: number }[];
}

/** A memory lacking a vector of some model; `cursor` orders them (pass the last one back to read on). */
export interface MissingVector {
  cursor: number;
  memory: Memory;
}

/**
 * A vector computed from a memory's title and content as they were read: it is written only if the memory still has
 * that title and content, so a reindex racing an update never stores a vector of the old text.
 */
export interface VectorWrite {
  scope: Scope;
  id: string;
  title: string;
  content: string;
  vector: StoredVector;
}

/** A memory restored as it was (ids, times, counters kept) with its vectors, one per model. */
export interface ImportedMemory {
  memory: Memory;
  vectors: readonly StoredVector[];
}

export interface MemoryMaintenance {
  vectorCoverage(filter: ScopeFilter): Promise<VectorCoverage>;
  /** Up to `limit` memories with no vector of `modelId`, in cursor order, after `afterCursor` (0: from the start). */
  missingVectors(modelId: string, filter: ScopeFilter, afterCursor: number, limit: number): Promise<MissingVector[]>;
  /**
   * Writes each vector beside the memory's vectors of other models (replacing one of the same model), in one
   * transaction, when the memory still has the title and content given; returns how many were written.
   */
  putVectors(writes: readonly VectorWrite[]): Promise<number>;
  /** Deletes the vectors of every model but `keepModelId` in the scopes; returns how many. */
  dropOtherVectors(filter: ScopeFilter, keepModelId: string): Promise<number>;
  /**
   * Inserts the memories in one transaction, without events. A memory whose id is already stored (in any scope), or
   * whose client id is already used in its scope, is left out and its id returned in `skipped`.
   */
  importMemories(items: readonly ImportedMemory[]): Promise<{ inserted: number; skipped: string[] }>;
}
