import type { DomainError } from '../errors.ts';
import type { NewEvent } from '../events/event.types.ts';
import type { Scope } from '../scope.ts';
import type { MemoryMaintenance } from './memory-maintenance.ts';
import type {
  CosineEstimate, KeywordCandidate, KeywordHit, KeywordQuery, ListQuery, Memory, MemoryPatch, MemoryRef, MemoryTombstone,
  MemoryVersion, ScopeUsage, SimilarityCandidate, SimilarityHit,
  SimilarityQuery, StoredVector, Suggestion,
} from './memory.types.ts';

/** Who deleted a memory, when and why: what its tombstone keeps (never its content). */
export interface Deletion {
  at: Date;
  by: string;
  reason: string;
}

/** One step of an atomic group of writes (G6 `atomic: true`, a create that supersedes, a forget). */
export type AtomicStep = (
  | { kind: 'insert'; memory: Memory; vector: StoredVector }
  | { kind: 'update'; id: string; patch: MemoryPatch; at: Date; by: string; vector: StoredVector | null }
  | { kind: 'delete'; id: string; deletion: Deletion }
  | { kind: 'read'; id: string; at: Date }
  /** Marks memory `id` replaced by memory `by` (which may be inserted by an earlier step): superseded_by and valid_until. */
  | { kind: 'supersede'; id: string; by: string; validUntil: Date }
) & { events?: EventsFor | undefined };

/**
 * The events a write emits, built from the memory as the write leaves it (for a delete, as it was). They are
 * appended in the same transaction as the write: both commit, or neither.
 */
export type EventsFor = (memory: Memory) => readonly NewEvent[];

/**
 * Up to this many vectors of one model in a scope, similarity search is exact on every store (see `searchSimilar`):
 * complete results and an exact `total`. Scanning that many is a few milliseconds; beyond it a store with an ANN
 * index may trade completeness for speed.
 */
export const EXACT_SIMILARITY_SCAN_MAX = 10_000;

/**
 * How far below `SimilarityQuery.minCosine` a store still keeps a hit: a memory scored exactly at a threshold must
 * not drop out because its cosine came out of float32 arithmetic a rounding error lower.
 */
export const MIN_COSINE_SLACK = 1e-6;

/** Thrown by applyAtomically when step `index` fails; nothing of the group was committed. */
export class AtomicStepFailed extends Error {
  constructor(readonly index: number, readonly error: DomainError) {
    super(`step ${index} failed: ${error.message}`);
    this.name = 'AtomicStepFailed';
  }
}

/**
 * The storage port for memories, in two parts one adapter keeps in step: the store (rows, vectors and tags; reads,
 * lists, counts, suggestions, maintenance) and the index over it (rankings). Every method takes the caller's scope
 * and never sees outside it.
 */
export interface MemoryRepository extends MemoryStore, MemoryIndex {}

/** The memories themselves. Each write is atomic: the row, its tags and its vector commit together or not at all. */
export interface MemoryStore extends MemoryMaintenance {
  /** Inserts; a client id already used in the scope is a DomainError CONFLICT and nothing is written. */
  insert(memory: Memory, vector: StoredVector, events?: EventsFor): Promise<void>;
  /**
   * Deduplicating insert: when the scope already holds a memory whose content has the same `contentHash`
   * (core/memories/content-hash.ts), returns the oldest such memory and writes nothing; otherwise inserts (as
   * `insert`) and returns null. The check and the insert are one atomic step: racing calls with one content store
   * it once, across connections and processes.
   */
  insertUnlessDuplicate(memory: Memory, vector: StoredVector, events?: EventsFor): Promise<Memory | null>;
  /** The scope's oldest memory whose content has the same `contentHash` as `content`; null when none. */
  findByContent(scope: Scope, content: string): Promise<Memory | null>;
  findById(scope: Scope, id: string): Promise<Memory | null>;
  findByClientId(scope: Scope, clientId: string): Promise<Memory | null>;
  /** Ids in scope starting with `prefix` (lowercase), at most `limit`. */
  findIdsByPrefix(scope: Scope, prefix: string, limit: number): Promise<string[]>;
  /** Counts one access and returns the memory as it is after it; null when absent. */
  recordAccess(scope: Scope, id: string, at: Date): Promise<Memory | null>;
  /**
   * Applies the patch (and the new vector, when given); null when absent. In the same transaction the state it
   * replaces is kept as a MemoryVersion (replacedAt/By: `updatedAt`/`updatedBy`) and `version` goes up by one.
   */
  update(scope: Scope, id: string, patch: MemoryPatch, updatedAt: Date, updatedBy: string,
    vector: StoredVector | null, events?: EventsFor): Promise<Memory | null>;
  /**
   * Forgets a memory, in one transaction: the row, its vectors, tags, keyword postings and kept versions go; a
   * tombstone (`deletion`, no content) stays; its stored events keep only its id (`forgottenEventData`, which the
   * webhook deliveries still due read); answers kept for idempotent retries that hold it are dropped; the ingestion
   * job that wrote it keeps neither the proposal's text nor its source turns (core/ingestion/ingestion-forget.ts).
   * False when absent.
   */
  delete(scope: Scope, id: string, deletion: Deletion, events?: EventsFor): Promise<boolean>;
  /** The kept earlier states of a memory, newest first; `total` counts them all. Empty when none (or no such memory). */
  history(scope: Scope, id: string, page: { limit: number; offset: number }): Promise<{ versions: MemoryVersion[]; total: number }>;
  /** The memories of the scope that memory `id` superseded (superseded_by = id), oldest first. */
  findSupersededBy(scope: Scope, id: string): Promise<Memory[]>;
  /** The tombstone a deleted memory left; null when it was never deleted in this scope. */
  tombstoneOf(scope: Scope, id: string): Promise<MemoryTombstone | null>;
  /**
   * Runs the steps in order in one transaction: all commit or none. Returns, per step, the memory as it is after
   * it (for a delete, as it was). A missing id or a client-id conflict throws AtomicStepFailed.
   */
  applyAtomically(scope: Scope, steps: readonly AtomicStep[]): Promise<Memory[]>;
  list(scope: Scope, query: ListQuery): Promise<{ items: Memory[]; total: number }>;
  /** Counts, sizes, accesses and tags of the scope's memories (see ScopeUsage). */
  usage(scope: Scope, options: { since: Date; top: number }): Promise<ScopeUsage>;
  /** How many memories of the scope each topic holds. */
  countByTopic(scope: Scope, topicIds: readonly string[]): Promise<Map<string, number>>;
  /** Stored vectors of the given memories for one model (absent ids and other models are left out). */
  vectorsOf(scope: Scope, ids: readonly string[], modelId: string): Promise<Map<string, Float32Array>>;
  /** The scope's memories with these refs (the index's handles); refs absent from the scope (or deleted since) are left out. */
  findByRefs(scope: Scope, refs: readonly MemoryRef[]): Promise<Map<MemoryRef, Memory>>;
  /**
   * Tags in scope starting with `prefix` (case-insensitive), most used first, with how many memories carry them;
   * with `validAt`, only memories valid then count (MemoryFilter.validAt).
   */
  suggestTags(scope: Scope, prefix: string, limit: number, validAt?: Date): Promise<Suggestion[]>;
  /** Titles in scope containing `text` (case-insensitive), prefix matches and frequent titles first (`validAt` as above). */
  suggestTitles(scope: Scope, text: string, limit: number, validAt?: Date): Promise<Suggestion[]>;
}

/**
 * The rankings of the store's memories: by similarity (cosines of their stored vectors to a query vector; cosines
 * only, the core turns them into scores) and by keyword.
 */
export interface MemoryIndex {
  /**
   * Best first by cosine, `hits` at most `limit` of them, each with a cosine of at least `minCosine` (less
   * MIN_COSINE_SLACK). When the scope holds at most `EXACT_SIMILARITY_SCAN_MAX` vectors of the query's model (before
   * filters), every adapter scans exactly: `hits` are the true best and `total` counts every memory at or above the
   * bound. Above that size an adapter may use an approximate (ANN) index: then `hits` are the best the index found
   * and `total` counts the memories at or above the bound among those it examined — a lower bound of the exact
   * count, never less than `hits.length`. SQLite always scans exactly.
   */
  searchSimilar(scope: Scope, query: SimilarityQuery): Promise<{ hits: SimilarityHit[]; total: number }>;
  /** Keyword (full-text) search, ranked by `relevance`: best first; `total` counts every matching memory. */
  searchKeyword(scope: Scope, query: KeywordQuery): Promise<{ hits: KeywordHit[]; total: number }>;
  /*
   * Deferred materialisation (hybrid search): the two rankings by handle (MemoryRef) without their rows, the cosines
   * of chosen memories, and (MemoryStore.findByRefs) the rows of the few hits kept. A hybrid search ranks a pool of
   * keyword candidates and keeps `limit` of them; reading (and parsing) a row is most of what a candidate costs, so
   * only the kept ones are read.
   */
  /**
   * As searchSimilar (same hits, order, cosines and total), without reading the memories: refs and cosines. Rows are
   * not checked, so a memory deleted by another process while the index caught up may still be ranked (findByRefs
   * leaves it out). Its caller works on its own thread meanwhile (hybrid search ranks keywords beside it), which a
   * store scanning in threads of this process may leave a core.
   */
  rankSimilar(scope: Scope, query: Omit<SimilarityQuery, 'withVectors'>): Promise<{ hits: SimilarityCandidate[]; total: number }>;
  /** As searchKeyword (same hits, order, scores and total), without reading the memories: refs and scores (as rankSimilar). */
  rankKeyword(scope: Scope, query: KeywordQuery): Promise<{ hits: KeywordCandidate[]; total: number }>;
  /**
   * The cosine of each given memory's stored vector of `modelId` to `vector`, computed as searchSimilar computes it
   * (a memory both return has the same cosine in both; 0 when either vector is all zeros). Refs absent from the scope
   * and memories without a vector of that model and width are left out.
   */
  cosinesOf(scope: Scope, refs: readonly MemoryRef[], query: { vector: Float32Array; modelId: string }): Promise<Map<MemoryRef, number>>;
  /**
   * Cheap bounds on those cosines: each ref's exact cosine (as cosinesOf gives it) lies within `error` of `cosine`.
   * A store with an in-memory index estimates from it; one without returns the exact cosines (error 0). Refs it
   * cannot estimate are left out (cosinesOf tells whether they have a vector). With `sharpen`, a store that has
   * cheaper, wider bounds may give those first and ask `sharpen` (once, synchronously) which refs need its
   * narrowest; the others keep the wide ones. Without it, every bound is the narrowest the store has.
   */
  cosineEstimatesOf(scope: Scope, refs: readonly MemoryRef[], query: { vector: Float32Array; modelId: string },
    sharpen?: (bounds: ReadonlyMap<MemoryRef, CosineEstimate>) => readonly MemoryRef[]): Promise<Map<MemoryRef, CosineEstimate>>;
}
