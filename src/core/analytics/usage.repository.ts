import type { KeyMode } from '../scope.ts';

/** Raw usage figures of one tenant + mode (every workspace) for a time window (from, to]. */
export interface UsageCounts {
  /** Memories stored now (not windowed). */
  totalMemories: number;
  /** memory.created / memory.updated / memory.deleted events in the window (from the event log). */
  creates: number;
  updates: number;
  deletes: number;
  /** Searches in the window (from the search log) and their mean execution time; null when there were none. */
  searches: number;
  avgSearchMs: number | null;
}

/** Storage port for the small analytics summary (the G7 stream, `analytics.update` events). */
export interface UsageRepository {
  counts(tenantId: string, mode: KeyMode, from: Date, to: Date): Promise<UsageCounts>;
  /**
   * The (tenant, mode) pairs with memory operations or searches (memory.created / updated / deleted,
   * search.performed events) in (from, to]: those whose summary may have changed.
   */
  activeScopes(from: Date, to: Date): Promise<{ tenantId: string; mode: KeyMode }[]>;
}
