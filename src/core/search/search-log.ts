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
  /** Mean score of the returned results; null when there were none. */
  avgScore: number | null;
  filters: Record<string, unknown>;
  at: Date;
}

export interface SearchLogRepository {
  append(entry: SearchLogEntry): Promise<void>;
  /** Past queries in scope starting with `prefix` (case-insensitive), most frequent first. */
  suggestQueries(scope: Scope, prefix: string, limit: number): Promise<Suggestion[]>;
}
