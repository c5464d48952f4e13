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

/** Stored memories of one memory_type: how many, their size, and the size of those created since a time. */
export interface MemoryTypeUsage {
  memoryType: string;
  count: number;
  /** UTF-8 bytes of title + content (vectors, tags and metadata not counted). */
  bytes: number;
  /** The same, of the memories created at or after `since`. */
  bytesSince: number;
}

/** A per-minute count (and, for searches, the summed execution time in ms). */
export interface MinuteCount { minute: Date; count: number; totalMs: number }

export interface QueryUsage { query: string; count: number; avgMs: number }

/** Model usage (ingestion's `extract` jobs) summed over the jobs that finished in one minute. */
export interface LlmMinuteUsage { minute: Date; modelCalls: number; promptTokens: number; completionTokens: number }

/** Storage port for analytics: the small summary (G7 stream, `analytics.update` events) and the G7 report. */
export interface UsageRepository {
  /** The tenant + mode's memories (every workspace) grouped by memory_type, largest first. */
  memoryStorage(tenantId: string, mode: KeyMode, since: Date): Promise<MemoryTypeUsage[]>;
  /** Searches per minute (search log) in [from, to), oldest first; minutes without searches are absent. */
  searchesPerMinute(tenantId: string, mode: KeyMode, from: Date, to: Date): Promise<MinuteCount[]>;
  /** memory.created / updated / deleted events per minute in [from, to) (totalMs 0); held only as long as events are. */
  operationsPerMinute(tenantId: string, mode: KeyMode, from: Date, to: Date): Promise<MinuteCount[]>;
  /** The most frequent non-empty normalised queries in [from, to), most frequent first (ties by query). */
  topQueries(tenantId: string, mode: KeyMode, from: Date, to: Date, limit: number): Promise<QueryUsage[]>;
  /**
   * Model calls and tokens of the ingestion jobs (every workspace) that finished in [from, to), per minute of their
   * `finished_at`, oldest first; minutes without model calls are absent. A job waiting for a review is not finished;
   * held only as long as finished jobs are.
   */
  llmUsagePerMinute(tenantId: string, mode: KeyMode, from: Date, to: Date): Promise<LlmMinuteUsage[]>;
  counts(tenantId: string, mode: KeyMode, from: Date, to: Date): Promise<UsageCounts>;
  /**
   * The (tenant, mode) pairs with memory operations or searches (memory.created / updated / deleted,
   * search.performed events) in (from, to]: those whose summary may have changed.
   */
  activeScopes(from: Date, to: Date): Promise<{ tenantId: string; mode: KeyMode }[]>;
}
