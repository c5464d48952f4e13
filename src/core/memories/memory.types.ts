import type { Scope } from '../scope.ts';

/** The six types the spec lists; any other lowercase identifier is accepted too (the spec's own `meeting`). */
export const KNOWN_MEMORY_TYPES = ['context', 'project', 'knowledge', 'reference', 'personal', 'workflow'] as const;
export const DEFAULT_MEMORY_TYPE = 'context';
export const MEMORY_TYPE_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

export const MAX_TITLE_LENGTH = 255;
export const MAX_TAGS = 100;
export const MAX_TAG_LENGTH = 100;
export const MAX_METADATA_BYTES = 64 * 1024;
/** Client-chosen ids (G2): letters, digits, `_ - . :`, 1-128 characters. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export type Metadata = Record<string, unknown>;

export interface Memory {
  id: string;
  /** An id chosen by the client (G2), unique within the scope; null for most memories. */
  clientId: string | null;
  scope: Scope;
  title: string;
  content: string;
  memoryType: string;
  tags: string[];
  metadata: Metadata;
  topicId: string | null;
  createdAt: Date;
  updatedAt: Date;
  createdBy: string;
  updatedBy: string;
  accessCount: number;
  lastAccessed: Date | null;
  /** From when the memory holds (docs/memory-lifecycle.md): its creation time unless the writer set it. */
  validFrom: Date;
  /** Until when it holds (exclusive); null: open. Set to its successor's validFrom when superseded. */
  validUntil: Date | null;
  /** The memory that replaced this one (supersession); null when none did. */
  supersededBy: string | null;
  /** 1 as created, one more per update; earlier states are kept (`MemoryStore.history`). */
  version: number;
}

/** An earlier state of a memory, kept when an update replaced it. */
export interface MemoryVersion {
  memoryId: string;
  version: number;
  title: string;
  content: string;
  memoryType: string;
  tags: string[];
  metadata: Metadata;
  topicId: string | null;
  validFrom: Date;
  validUntil: Date | null;
  /** When and by whom this state was written (the memory's updated_at / updated_by then). */
  writtenAt: Date;
  writtenBy: string;
  /** When and by whom the update that replaced it was made. */
  replacedAt: Date;
  replacedBy: string;
}

/** What a delete leaves of a memory: never its content. */
export interface MemoryTombstone {
  memoryId: string;
  scope: Scope;
  deletedAt: Date;
  deletedBy: string;
  reason: string;
}

/**
 * Whether a memory holds at `at` (MemoryFilter.validAt): it has not ended (valid_until > at, or open) and it has begun
 * (valid_from ≤ at) — a memory whose valid_from is not after its creation has begun whenever it can be read, so a
 * node whose clock runs a little behind the writer's still sees a fresh write. Whether it existed at `at` is a
 * separate condition (created_at ≤ at), which `as_of` adds (core/memories/validity.ts).
 */
export const isValidAt = (m: Pick<Memory, 'validFrom' | 'validUntil' | 'createdAt'>, at: Date): boolean =>
  (m.validUntil === null || m.validUntil.getTime() > at.getTime())
  && (m.validFrom.getTime() <= at.getTime() || m.validFrom.getTime() <= m.createdAt.getTime());

/**
 * The memories `isValidAt` may refuse: only these are ever filtered out by validity, and stores index them
 * (`WHERE valid_until IS NOT NULL OR valid_from > created_at`).
 */
export const isTimeBounded = (m: Pick<Memory, 'validFrom' | 'validUntil' | 'createdAt'>): boolean =>
  m.validUntil !== null || m.validFrom.getTime() > m.createdAt.getTime();

/** A vector as stored: native width, with the id of the model that made it. */
export interface StoredVector {
  modelId: string;
  vector: Float32Array;
}

export interface NewMemoryInput {
  title: string;
  content: string;
  clientId?: string | undefined;
  /** A vector supplied by the client (G2) instead of one computed from the text. */
  vector?: StoredVector | undefined;
  memoryType?: string | undefined;
  tags?: string[] | undefined;
  metadata?: Metadata | undefined;
  topicId?: string | null | undefined;
  /** Default: the creation time. */
  validFrom?: Date | undefined;
  validUntil?: Date | null | undefined;
  /** Memories of the same scope this one replaces (atomically: see MemoryService.create). */
  supersedes?: string[] | undefined;
}

export interface MemoryPatch {
  title?: string | undefined;
  content?: string | undefined;
  memoryType?: string | undefined;
  tags?: string[] | undefined;
  metadata?: Metadata | undefined;
  topicId?: string | null | undefined;
  validFrom?: Date | undefined;
  /** null reopens the memory's validity. */
  validUntil?: Date | null | undefined;
}

/** A metadata filter value: a scalar must equal; an array means any of them. */
export type MetadataFilterValue = string | number | boolean | (string | number | boolean)[];

/** Metadata keys a filter may name: dotted paths into nested objects, e.g. `source.kind`. */
export const METADATA_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,7}$/;

/**
 * Filters shared by list and every search. Tags: `tagsAny` matches memories having at least one of the tags,
 * `tagsAll` those having every one. Metadata: each key must match (AND across keys); a stored array matches when
 * any of its elements matches.
 */
export interface MemoryFilter {
  types?: string[] | undefined;
  tagsAny?: string[] | undefined;
  tagsAll?: string[] | undefined;
  /** Inclusive bounds on created_at. */
  createdFrom?: Date | undefined;
  createdTo?: Date | undefined;
  metadata?: Record<string, MetadataFilterValue> | undefined;
  topicId?: string | undefined;
  /**
   * Only memories valid at this moment (`isValidAt`: not ended, and begun unless valid from their creation). The core
   * sets it on every list and search (now, or the caller's `as_of`, which also sets createdTo); absent
   * (`include_expired`), validity does not filter. Not counted by hasMemoryFilter: stores answer it apart, since only
   * time-bounded memories (`isTimeBounded`: few, and indexed) can fail it.
   */
  validAt?: Date | undefined;
}

/** Whether the filter restricts anything beyond validity (an empty one keeps every memory). */
export const hasMemoryFilter = (f: MemoryFilter): boolean => Boolean(
  f.topicId !== undefined || f.types?.length || f.tagsAny?.length || f.tagsAll?.length || f.createdFrom || f.createdTo
  || Object.keys(f.metadata ?? {}).length,
);

export type SortField = 'created_at' | 'updated_at' | 'title';
export type SortOrder = 'asc' | 'desc';

export interface ListQuery {
  filter: MemoryFilter;
  limit: number;
  offset: number;
  sortBy: SortField;
  sortOrder: SortOrder;
}

export interface SimilarityQuery {
  vector: Float32Array;
  modelId: string;
  limit: number;
  /**
   * Lowest cosine a hit may have (stores keep hits down to `minCosine - MIN_COSINE_SLACK`, memory.repository.ts).
   * A cosine, never a public score: the core turns thresholds into cosines (core/search/score-calibration.ts).
   */
  minCosine: number;
  filter: MemoryFilter;
  /** Return each hit's stored vector too. */
  withVectors?: boolean | undefined;
}

export interface SimilarityHit {
  memory: Memory;
  cosine: number;
  vector?: Float32Array | undefined;
}

/**
 * A store's handle on one memory of one scope, as its rankings return it (both stores: the row's seq), so that a
 * caller keeping only a few of many candidates (hybrid search) reads only those rows, by handle
 * (`MemoryStore.findByRefs`). Meaningful only in the scope it came from; a memory deleted since is absent.
 */
export type MemoryRef = number | string;

/** A similarity search's hit before its memory is read: what `MemoryIndex.rankSimilar` returns. */
export interface SimilarityCandidate {
  ref: MemoryRef;
  cosine: number;
}

/** A cosine known to lie within `error` of `cosine` (`MemoryIndex.cosineEstimatesOf`; exact when 0). */
export interface CosineEstimate {
  cosine: number;
  error: number;
}

export interface KeywordQuery {
  /** Terms to match (any of them); the adapter ranks them by a relevance of its own (SQLite: BM25). */
  terms: string[];
  limit: number;
  filter: MemoryFilter;
  /**
   * Candidate cap: per term, only the `candidatesPerTerm` newest memories of the scope holding it are scored (its
   * document frequency stays exact), so a very common term costs a bounded amount of ranking work. Below the cap
   * the ranking is exact. Default {@link KEYWORD_CANDIDATES_PER_TERM}.
   */
  candidatesPerTerm?: number | undefined;
}

/** Default keyword candidate cap per query term (docs/api.md, "Keyword candidates"). */
export const KEYWORD_CANDIDATES_PER_TERM = 1000;

/** A keyword search's hit before its memory is read (`MemoryIndex.rankKeyword`): as KeywordHit, by ref. */
export interface KeywordCandidate {
  ref: MemoryRef;
  relevance: number;
  coverage: number;
}

export interface KeywordHit {
  memory: Memory;
  /**
   * The store's relevance score (SQLite: BM25), higher is better, never negative; comparable only within one
   * query (the core normalises it by the best hit). Any corpus statistics behind it are the scope's own: nothing
   * written in another tenant, mode or workspace may change it.
   */
  relevance: number;
  /**
   * How much of the query the memory holds: the share of the query words' idf (over the same scope statistics) of
   * the words it contains, 0..1. Unlike `relevance` it is comparable across queries: the core's hybrid fusion uses it.
   */
  coverage: number;
}

/** A suggestion drawn from stored data: the text and how many times it occurs. */
export interface Suggestion {
  text: string;
  frequency: number;
}

/** Figures of one scope's memories (G2 stats, the client analytics routes of G7). */
export interface ScopeUsage {
  total: number;
  /** Memories per memory_type (only types present). */
  byType: Record<string, number>;
  /** UTF-8 bytes of titles + contents. */
  bytes: number;
  /** The sum of every memory's access_count (Get reads). */
  totalAccesses: number;
  /** The most read memories (access_count > 0), most first, ties by id; at most `top`. */
  mostAccessed: Memory[];
  /** Created at or after `since`. */
  createdSince: number;
  /** Updated after their creation, at or after `since`. */
  updatedSince: number;
  /** The most used tags, most first, ties by tag; at most `top`. */
  topTags: { tag: string; count: number }[];
}
