import type { Suggestion } from '../memories/memory.types.ts';
import type { Scope } from '../scope.ts';

export type SearchKind = 'semantic' | 'keyword' | 'hybrid' | 'vector';

/** One executed search: feeds suggestions, `search.performed` events and search analytics. */
export interface SearchLogEntry {
  scope: Scope;
  userId: string;
  /** The API generation that served it, e.g. `g1`, `g3`, `g4`. */
  surface: string;
  kind: SearchKind;
  /** The query text; empty for a vector search. */
  query: string;
  resultsCount: number;
  /** Wall time of the whole search (embedding included), in milliseconds. */
  executionMs: number;
  /**
   * Mean similarity of the returned results (the calibrated similarity, docs/api.md "Scores"; a keyword-only
   * search, which has none, its relevance score); null when there were none. G4 analytics averages it as
   * `avg_similarity_score`.
   */
  avgScore: number | null;
  filters: Record<string, unknown>;
  at: Date;
}

/** A half-open time slice `[start, end)`. */
export interface TimeSlice { start: Date; end: Date }

/** What search analytics asks of the log: one scope, searches at `from` <= at < `to`. */
export interface SearchStatsQuery {
  scope: Scope;
  from: Date;
  to: Date;
  /** Slices counted one by one for the trend; each is also clipped to `[from, to)`. */
  buckets: readonly TimeSlice[];
  /** How many top queries to return. */
  topLimit: number;
}

export interface SearchStats {
  totalSearches: number;
  /** Distinct non-empty normalised queries (a vector search has no query text). */
  uniqueQueries: number;
  /** Null when there were no searches. */
  avgResults: number | null;
  avgExecutionMs: number | null;
  zeroResultSearches: number;
  /** Most searched normalised queries first (ties: alphabetical); `avgScore` over those that returned results. */
  topQueries: { query: string; count: number; avgScore: number | null }[];
  /** One per requested bucket, in the same order. */
  buckets: { searches: number; avgExecutionMs: number | null }[];
}

/** What the zero-result list asks of the log: one scope, searches at `from` <= at < `to`, at most `limit` queries. */
export interface ZeroResultQueriesQuery {
  scope: Scope;
  from: Date;
  to: Date;
  limit: number;
}

/** A normalised query whose searches found nothing: how many of them did, and when the latest ran. */
export interface ZeroResultQuery {
  query: string;
  count: number;
  lastSeen: Date;
}

export interface SearchLogRepository {
  /** Entries in one transaction (the search recorder writes searches in batches). */
  appendMany(entries: readonly SearchLogEntry[]): Promise<void>;
  /** Past queries in scope starting with `prefix` (case-insensitive), most frequent first. */
  suggestQueries(scope: Scope, prefix: string, limit: number): Promise<Suggestion[]>;
  /** Totals, top queries and per-bucket counts of the searches in one scope and time range. */
  stats(query: SearchStatsQuery): Promise<SearchStats>;
  /**
   * The queries in one scope and time range whose searches returned no result, most such searches first (ties: the
   * latest first, then alphabetical); vector searches (no query text) are left out.
   */
  zeroResultQueries(query: ZeroResultQueriesQuery): Promise<ZeroResultQuery[]>;
}
