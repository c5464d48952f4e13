import {
  AtomicStepFailed, MIN_COSINE_SLACK, type AtomicStep, type Deletion, type EventsFor, type MemoryRepository,
} from '../../../core/memories/memory.repository.ts';
import {
  hasMemoryFilter, KEYWORD_CANDIDATES_PER_TERM, METADATA_KEY_PATTERN, type KeywordQuery, type ListQuery, type Memory, type MemoryFilter,
  type CosineEstimate, type MemoryPatch, type MetadataFilterValue, type MemoryRef, type SimilarityHit, type SimilarityQuery, type StoredVector,
} from '../../../core/memories/memory.types.ts';
import { seqsOf } from '../memory-refs.ts';
import { DomainError } from '../../../core/errors.ts';
import type { Scope } from '../../../core/scope.ts';
import { blobToVector, vectorToBlob, type SqliteDb } from './sqlite.database.ts';
import { SqliteVectorCache } from './sqlite-vector-cache.ts';
import { createSqliteMemoryMaintenance } from './sqlite-memory-maintenance.ts';
import { SqliteWorkspaceVersions } from './sqlite-workspace-versions.ts';
import { SqliteFilterCache } from './sqlite-filter-cache.ts';
import { metadataIndexKeys } from './sqlite-metadata-index.ts';
import { SqliteBroadConditions } from './sqlite-broad-conditions.ts';
import { SqliteKeywordLengths } from './sqlite-keyword-lengths.ts';
import { SqliteKeywordRanking } from './sqlite-keyword-ranking.ts';
import { isUniqueViolation } from './sqlite-errors.ts';
import type { SqliteOutbox } from './sqlite-outbox.ts';
import type { StoredEvent } from '../../../core/events/event.types.ts';
import type { WarningLog } from '../../../core/warning-log.ts';
import { toKeywordCandidates, toKeywordHits } from '../bm25.ts';
import { contentHash } from '../../../core/memories/content-hash.ts';
import { SqliteGroupCommit } from './sqlite-group-commit.ts';
import { createStatementCache } from './sqlite-statement-cache.ts';
import { floatView } from './sqlite-vector-rows.ts';
import { exactScores } from './vector-scan/rerank.ts';
import { unitRowInto } from './vector-scan/matrix-storage.ts';
import type { MatrixHit, VectorMatrix } from './vector-scan/vector-matrix.ts';
import { KeyBitmap } from './vector-scan/allowed-keys.ts';
import {
  INSERT_MEMORY_SQL, memoryParams, toMemory, toMemoryTombstone, toMemoryVersion, type MemoryRow, type MemoryTombstoneRow,
  type MemoryVersionRow,
} from './sqlite-memory-row.ts';
import { forgetMemoryTraces } from './sqlite-forget-traces.ts';

const SCOPE_WHERE = 'm.tenant_id = ? AND m.mode = ? AND m.workspace = ?';
const scopeParams = (s: Scope): [string, string, string] => [s.tenantId, s.mode, s.workspace];

/** A metadata filter's values as SQLite's JSON functions give them (booleans as 1 and 0). */
const metadataValues = (wanted: MetadataFilterValue): unknown[] =>
  (Array.isArray(wanted) ? wanted : [wanted]).map((v) => (typeof v === 'boolean' ? Number(v) : v));

/**
 * SQL for the shared filters; `m` is the memories alias. `guarded`: rows whose metadata SQLite cannot read match no
 * metadata condition (and are noted) instead of failing the statement — slower, so used only after such a failure.
 * `indexKey` (the metadata index's key for a filter key, metadataIndexKeys): metadata conditions are probes of
 * memory_metadata (migration 22) instead of parsing each row's JSON; a row SQLite cannot read matches none, as guarded.
 */
function filterSql(filter: MemoryFilter, guarded = false, indexKey?: (key: string) => string): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
  if (filter.types && filter.types.length > 0) {
    parts.push(`m.memory_type IN (${marks(filter.types.length)})`);
    params.push(...filter.types);
  }
  if (filter.tagsAny && filter.tagsAny.length > 0) {
    parts.push(`EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_seq = m.seq AND t.tag IN (${marks(filter.tagsAny.length)}))`);
    params.push(...filter.tagsAny);
  }
  if (filter.tagsAll && filter.tagsAll.length > 0) {
    const tags = [...new Set(filter.tagsAll)];
    parts.push(`(SELECT COUNT(*) FROM memory_tags t WHERE t.memory_seq = m.seq AND t.tag IN (${marks(tags.length)})) = ?`);
    params.push(...tags, tags.length);
  }
  if (filter.topicId !== undefined) {
    parts.push('m.topic_id = ?');
    params.push(filter.topicId);
  }
  if (filter.createdFrom) {
    parts.push('m.created_at >= ?');
    params.push(filter.createdFrom.getTime());
  }
  if (filter.createdTo) {
    parts.push('m.created_at <= ?');
    params.push(filter.createdTo.getTime());
  }
  const metadataParts: string[] = [];
  for (const [key, wanted] of Object.entries(filter.metadata ?? {})) {
    // The key becomes a JSON path: only safe identifiers are accepted (the core validates; this is the last guard).
    if (!METADATA_KEY_PATTERN.test(key)) throw new RangeError(`invalid metadata key ${key}`);
    const values = metadataValues(wanted);
    if (values.length === 0) {
      metadataParts.push('0');
      continue;
    }
    if (indexKey) {
      parts.push(`EXISTS (SELECT 1 FROM memory_metadata x WHERE x.key = ? AND x.value IN (${marks(values.length)}) AND x.memory_seq = m.seq)`);
      params.push(indexKey(key), ...values);
      continue;
    }
    // json_each over a scalar yields that scalar; over an array, its elements: a stored array matches any element.
    metadataParts.push(`EXISTS (SELECT 1 FROM json_each(m.metadata, ?) j WHERE j.value IN (${marks(values.length)}))`);
    params.push(`$${key.split('.').map((k) => `."${k}"`).join('')}`, ...values);
  }
  if (metadataParts.length > 0 && guarded) {
    // CASE, unlike AND, guarantees that json_valid is evaluated first.
    parts.push(`CASE WHEN json_valid(m.metadata) THEN (${metadataParts.join(' AND ')}) ELSE ${UNREADABLE_METADATA}(m.id) END`);
  } else parts.push(...metadataParts);
  // Validity (filter.validAt) is not SQL here: every path leaves out the scope's few memories not valid then by seq
  // (excludedAt in createSqliteMemoryRepository). As a condition on the rows it would make the filters' index-only
  // plans read every row they pass (a type filter's similarity prefilter took 4x as long).
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}

/** `m.seq NOT IN` a JSON array of seqs (parameter: the array's text): one statement text whatever their number. */
const NOT_EXCLUDED_SQL = ' AND m.seq NOT IN (SELECT value FROM json_each(?))';

/** Lifecycle reads whose plans matter (test/storage/sqlite.storage.test.ts checks them with EXPLAIN QUERY PLAN). */
export const LIFECYCLE_SQL = {
  /**
   * The scope's memories not valid at a moment (MemoryFilter.validAt, `isValidAt`), by seq; parameters: scope, moment
   * twice. Only time-bounded memories can be (valid_until set, or valid_from after creation: the partial index
   * memories_scope_bounded holds only those, and its WHERE is repeated verbatim so that the planner uses it): those that
   * have ended or not begun. Nearly always empty: then every search runs as without validity. (`as_of`'s "recorded by
   * then" is the filter's createdTo, an ordinary filter.)
   */
  excludedAt: `SELECT m.seq FROM memories m WHERE ${SCOPE_WHERE} AND (m.valid_until IS NOT NULL OR m.valid_from > m.created_at)
      AND (m.valid_until <= ? OR (m.valid_from > ? AND m.valid_from > m.created_at))`,
  /**
   * The memories one superseded (parameters: scope, its id), in no order: an ORDER BY the scope's created_at index
   * answers leads the planner to walk the whole scope on that index instead of reading the few rows of the partial
   * index memories_scope_superseded_by, so the caller sorts.
   */
  supersededBy: `SELECT m.* FROM memories m WHERE ${SCOPE_WHERE} AND m.superseded_by = ?`,
} as const;

/** A SQL function that notes a row whose metadata SQLite cannot read, and answers 0 (no match). */
const UNREADABLE_METADATA = 'mnemo_unreadable_metadata';

/**
 * What SQLite's JSON functions throw for metadata nested deeper than 1000 levels (which Mnemo stored before it
 * limited depth): one such row would fail every metadata-filtered query of its workspace.
 */
const isUnreadableJson = (err: unknown): boolean => err instanceof Error && /malformed JSON/.test(err.message);

const hasFilter = hasMemoryFilter;

/** Index rows (tags, metadata) a similarity prefilter reads at most per row of the scope's matrix (one costs ~⅓ of a walked row). */
const INDEX_ROWS_PER_SCOPE_ROW = 2;
/** Rows above the threshold up to which an unfiltered scan then a check of the filter on them answers (postFiltered). */
const POST_FILTER_ROWS = 1000;
/** A filter not cached is read before the scan when an indexed condition of it keeps under this share of the scope. */
const NARROW_SHARE = 0.1;

/** `%`, `_` and `\` taken literally in a LIKE pattern (with ESCAPE '\'). */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A client-id unique violation as the domain's CONFLICT; anything else unchanged. */
function asConflict(err: unknown, memory: Memory): unknown {
  if (!isUniqueViolation(err, 'client_id')) return err;
  return new DomainError('CONFLICT', `A memory with id ${memory.clientId} already exists`, {
    fields: [{ field: 'id', reason: 'conflict', message: 'already exists' }],
  });
}

/** How many reported ids are remembered (to log each once) before the memory starts over. */
const MAX_REPORTED_IDS = 10_000;

const SORT_COLUMNS = { created_at: 'm.created_at', updated_at: 'm.updated_at', title: 'm.title' } as const;

/** Content hashes of rows written before the column existed (see migration 14), in batches, once per open. */
function backfillContentHashes(db: SqliteDb): void {
  const missing = db.prepare<[number], { seq: number; content: string }>('SELECT seq, content FROM memories WHERE content_hash IS NULL LIMIT ?');
  const set = db.prepare('UPDATE memories SET content_hash = ? WHERE seq = ?');
  const batch = db.transaction(() => {
    const rows = missing.all(1000);
    for (const r of rows) set.run(contentHash(r.content), r.seq);
    return rows.length;
  });
  while (batch.immediate() > 0) { /* until none is left */ }
}

/** The SQLite repository with what the storage wires beyond the port: warming and closing its vector cache. */
export interface SqliteMemoryRepository extends MemoryRepository {
  /** Loads every workspace's vectors into memory in the background (server start). */
  warmUp(): Promise<void>;
  /** Commits the single-memory writes still queued (later ones are refused), then terminates the scan threads. */
  close(): Promise<void>;
  /** Shared COMMITs of single-memory writes so far, and the writes they acknowledged (see SqliteGroupCommit). */
  readonly groupCommit: Readonly<SqliteGroupCommit['stats']>;
}

/**
 * `vectors`: the in-process vector indexes (with their scan threads), on the same connection. `prefetchFiltersFrom`:
 * workspace rows from which broad filter conditions are read ahead of searches (SqliteBroadConditions).
 */
export function createSqliteMemoryRepository(db: SqliteDb, outbox: SqliteOutbox, log?: WarningLog,
  vectors = new SqliteVectorCache(db), group = new SqliteGroupCommit(db),
  options: { prefetchFiltersFrom?: number | undefined } = {}): SqliteMemoryRepository {
  backfillContentHashes(db);
  const versions = new SqliteWorkspaceVersions(db);
  const filterCache = new SqliteFilterCache(db, keptAmong);
  const metadataKey = metadataIndexKeys(db);
  const broad = new SqliteBroadConditions(db, filterCache, allowedSeqs, metadataKey, options.prefetchFiltersFrom);
  const keywordRanking = new SqliteKeywordRanking(db, new SqliteKeywordLengths(db));

  // Filled while a filtered statement runs (better-sqlite3 is synchronous), reported right after it.
  const unreadable = new Set<string>();
  const reported = new Set<string>();
  db.function(UNREADABLE_METADATA, { deterministic: false }, (id: unknown) => {
    unreadable.add(String(id));
    return 0;
  });
  /**
   * Runs a query built on `filter`'s SQL. Should a stored row's metadata be unreadable, runs it again guarded: that
   * row is skipped, and logged (each memory once per process).
   */
  function filtered<T>(scope: Scope, filter: MemoryFilter, run: (f: { sql: string; params: unknown[] }) => T): T {
    try {
      return run(filterSql(filter, false));
    } catch (err) {
      if (!isUnreadableJson(err)) throw err;
    }
    unreadable.clear();
    try {
      return run(filterSql(filter, true));
    } finally {
      const fresh = [...unreadable].filter((id) => !reported.has(id));
      unreadable.clear();
      if (fresh.length > 0) {
        if (reported.size > MAX_REPORTED_IDS) reported.clear();
        for (const id of fresh) reported.add(id);
        log?.warn({ tenant: scope.tenantId, mode: scope.mode, workspace: scope.workspace, memory_ids: fresh },
          'metadata filter skipped memories whose stored metadata SQLite cannot read (e.g. nested deeper than 1000 levels); '
          + 'update or delete them');
      }
    }
  }

  /**
   * `filter`'s SQL for the similarity paths: metadata conditions are probes of memory_metadata, so no stored JSON is
   * read (a row SQLite cannot parse has no index rows and matches nothing) and `filtered`'s guarded retry is not needed.
   */
  const indexedFilterSql = (filter: MemoryFilter) => filterSql(filter, false, metadataKey);

  const insertMemory = db.prepare(INSERT_MEMORY_SQL);
  const byContentHash = db.prepare<[string, string, string, string], MemoryRow>(
    `SELECT m.* FROM memories m WHERE ${SCOPE_WHERE} AND m.content_hash = ? ORDER BY m.seq LIMIT 1`);
  const insertTag = db.prepare('INSERT OR IGNORE INTO memory_tags (memory_seq, tag) VALUES (?, ?)');
  const deleteTags = db.prepare('DELETE FROM memory_tags WHERE memory_seq = ?');
  // A write that (re-)embeds a memory replaces every vector it has: vectors of other models (a reindex's) were made
  // from the old text. mnemo reindex adds them back (MemoryMaintenance.putVectors).
  const dropOtherModels = db.prepare('DELETE FROM memory_vectors WHERE memory_seq = ? AND model_id <> ?');
  const insertVector = db.prepare(`INSERT INTO memory_vectors (memory_seq, model_id, dims, vector) VALUES (?, ?, ?, ?)
    ON CONFLICT (memory_seq, model_id) DO UPDATE SET dims = excluded.dims, vector = excluded.vector`);
  const upsertVector = { run: (seq: number, modelId: string, dims: number, blob: Buffer) => {
    dropOtherModels.run(seq, modelId);
    insertVector.run(seq, modelId, dims, blob);
  } };
  const byId = db.prepare<[string, string, string, string], MemoryRow>(
    `SELECT m.* FROM memories m WHERE ${SCOPE_WHERE} AND m.id = ?`);
  const byClientId = db.prepare<[string, string, string, string], MemoryRow>(
    `SELECT m.* FROM memories m WHERE ${SCOPE_WHERE} AND m.client_id = ?`);
  const idsByPrefix = db.prepare<[string, string, string, string, string, number], { id: string }>(
    `SELECT m.id FROM memories m WHERE ${SCOPE_WHERE} AND m.id >= ? AND m.id < ? ORDER BY m.id LIMIT ?`);
  const touch = db.prepare<[number, string, string, string, string], MemoryRow>(
    `UPDATE memories AS m SET access_count = access_count + 1, last_accessed = ? WHERE ${SCOPE_WHERE} AND m.id = ?
     RETURNING *`);
  const remove = db.prepare<[string, string, string, string], MemoryRow>(
    `DELETE FROM memories AS m WHERE ${SCOPE_WHERE} AND m.id = ? RETURNING *`);
  // The state an update replaces, kept (history): written as the row has it, replaced by the update's time and author.
  const keepVersion = db.prepare<[number, string, string, string, string, string]>(
    `INSERT OR REPLACE INTO memory_versions (memory_id, version, tenant_id, mode, workspace, title, content, memory_type, tags,
       metadata, topic_id, valid_from, valid_until, written_at, written_by, replaced_at, replaced_by)
     SELECT m.id, m.version, m.tenant_id, m.mode, m.workspace, m.title, m.content, m.memory_type, m.tags, m.metadata, m.topic_id,
       m.valid_from, m.valid_until, m.updated_at, m.updated_by, ?, ? FROM memories m WHERE ${SCOPE_WHERE} AND m.id = ?`);
  const supersede = db.prepare<[string, number, string, string, string, string], MemoryRow>(
    `UPDATE memories AS m SET superseded_by = ?, valid_until = ? WHERE ${SCOPE_WHERE} AND m.id = ? RETURNING *`);
  const dropVersions = db.prepare<[string, string, string, string]>(
    'DELETE FROM memory_versions WHERE tenant_id = ? AND mode = ? AND workspace = ? AND memory_id = ?');
  const writeTombstone = db.prepare<[string, string, string, string, number, string, string]>(
    `INSERT OR REPLACE INTO memory_tombstones (memory_id, tenant_id, mode, workspace, deleted_at, deleted_by, reason)
     VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const versionCount = db.prepare<[string, string, string, string], number>(
    'SELECT COUNT(*) FROM memory_versions WHERE tenant_id = ? AND mode = ? AND workspace = ? AND memory_id = ?').pluck();
  const versionPage = db.prepare<[string, string, string, string, number, number], MemoryVersionRow>(
    `SELECT * FROM memory_versions WHERE tenant_id = ? AND mode = ? AND workspace = ? AND memory_id = ?
     ORDER BY version DESC LIMIT ? OFFSET ?`);
  const supersededBy = db.prepare<[string, string, string, string], MemoryRow>(LIFECYCLE_SQL.supersededBy);
  const tombstone = db.prepare<[string, string, string, string], MemoryTombstoneRow>(
    'SELECT * FROM memory_tombstones WHERE memory_id = ? AND tenant_id = ? AND mode = ? AND workspace = ?');
  const excludedAtStatement = db.prepare<[string, string, string, number, number], number>(
    LIFECYCLE_SQL.excludedAt).pluck();
  const excludedAt = (scope: Scope, at: Date): number[] => {
    const t = at.getTime();
    return excludedAtStatement.all(...scopeParams(scope), t, t);
  };
  /**
   * The seqs MemoryFilter.validAt leaves out (each once, all of the scope), or null when none need be (no validAt,
   * or every memory valid then: the usual case, which then runs exactly as without validity).
   */
  const exclusionsOf = (scope: Scope, filter: Pick<MemoryFilter, 'validAt'>): number[] | null => {
    if (!filter.validAt) return null;
    const seqs = excludedAt(scope, filter.validAt);
    return seqs.length > 0 ? seqs : null;
  };

  // Hot-path SQL whose IN list varies in length: each text prepared once.
  const prepared = createStatementCache(db);

  function vectorsForSeqs(seqs: readonly number[], modelId: string): Map<number, Float32Array> {
    const rows = prepared<unknown[], { memory_seq: number; vector: Buffer }>(
      `SELECT memory_seq, vector FROM memory_vectors WHERE model_id = ? AND memory_seq IN (${seqs.map(() => '?').join(', ')})`,
    ).all(modelId, ...seqs);
    return new Map(rows.map((r) => [r.memory_seq, blobToVector(r.vector)]));
  }

  /**
   * The conditions of `filter` an index lists the seqs of by itself (tagsAny's tags; each of tagsAll's; each metadata
   * key's values, from memory_metadata): SQL selecting `memory_seq`, repeats and seqs of other scopes included.
   */
  function indexedConditions(filter: MemoryFilter): { sql: string; params: unknown[] }[] {
    const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
    const out: { sql: string; params: unknown[] }[] = [];
    if (filter.tagsAny?.length) out.push({ sql: `SELECT memory_seq FROM memory_tags WHERE tag IN (${marks(filter.tagsAny.length)})`, params: filter.tagsAny });
    for (const tag of new Set(filter.tagsAll ?? [])) out.push({ sql: 'SELECT memory_seq FROM memory_tags WHERE tag = ?', params: [tag] });
    for (const [key, wanted] of Object.entries(filter.metadata ?? {})) {
      if (!METADATA_KEY_PATTERN.test(key)) throw new RangeError(`invalid metadata key ${key}`);
      const values = metadataValues(wanted);
      if (values.length === 0) continue;
      out.push({ sql: `SELECT memory_seq FROM memory_metadata WHERE key = ? AND value IN (${marks(values.length)})`, params: [metadataKey(key), ...values] });
    }
    return out;
  }

  /**
   * The seqs a filtered similarity scan may score (repeats, and seqs of other scopes, which the scope's matrix of
   * `scopeRows` rows does not hold, are harmless). A filter of one indexed condition alone (a tag list, one metadata
   * key) is read from its index while it has fewer than INDEX_ROWS_PER_SCOPE_ROW × scopeRows rows (a LIMIT tells);
   * else the first indexed condition under that bound drives a join that checks the rest per row; else the scope is
   * walked. Metadata conditions are index probes (memory_metadata) everywhere here: the walk parsing each row's JSON
   * made a metadata filter ~25× the unfiltered search at 100k (BENCHMARKS.md).
   */
  function allowedSeqs(scope: Scope, filter: MemoryFilter, scopeRows: number): KeyBitmap {
    if (Object.values(filter.metadata ?? {}).some((wanted) => metadataValues(wanted).length === 0)) return new KeyBitmap();
    const conditions = indexedConditions(filter);
    const cap = Math.ceil(INDEX_ROWS_PER_SCOPE_ROW * scopeRows) + 1;
    const rest = { ...filter, tagsAny: undefined, tagsAll: undefined, metadata: undefined };
    if (conditions.length === 1 && !hasFilter(rest)) {
      const [only] = conditions;
      const listed = seqList(`${only!.sql} LIMIT ?`, [...only!.params, cap]);
      if (listed.rows < cap) return listed.seqs;
    } else {
      for (const driving of conditions) {
        if ((prepared(`SELECT COUNT(*) FROM (${driving.sql} LIMIT ?)`).pluck().get(...driving.params, cap) as number) >= cap) continue;
        // The driving condition's rows are few enough to bound the join; the whole filter is checked per row.
        const f = indexedFilterSql(filter);
        return seqList(`SELECT m.seq FROM (${driving.sql}) d CROSS JOIN memories m ON m.seq = d.memory_seq
          WHERE +m.tenant_id = ? AND +m.mode = ? AND +m.workspace = ?${f.sql}`, [...driving.params, ...scopeParams(scope), ...f.params]).seqs;
      }
    }
    const f = indexedFilterSql(filter);
    return seqList(`SELECT m.seq FROM memories m WHERE ${SCOPE_WHERE}${f.sql}`, [...scopeParams(scope), ...f.params]).seqs;
  }

  /**
   * The seqs `sql` lists (one column), as a bitmap, and how many rows it listed: gathered by SQLite into one string
   * (group_concat) and parsed here, instead of one row at a time through the driver, which cost several times as much
   * (BENCHMARKS.md, filtered similarity search).
   */
  function seqList(sql: string, params: unknown[]): { rows: number; seqs: KeyBitmap } {
    const [rows, low, high, list] = prepared(`WITH listed(s) AS (${sql}) SELECT count(*), min(s), max(s), group_concat(s) FROM listed`)
      .raw().get(...params) as [number, number | null, number | null, string | null];
    return { rows, seqs: low === null || high === null ? new KeyBitmap() : KeyBitmap.ofList(list, low, high) };
  }

  /**
   * The filtered ranking from unfiltered scans, when at most POST_FILTER_ROWS rows reach the threshold: a first scan
   * (as cheap as an unfiltered search) counts them; if few, the filter is checked on exactly those rows (a second scan
   * lists them when the first did not), which gives the hits and total a filter-then-scan gives, since the filtered
   * rows above the threshold are all among them. Null when more rows reach it (the caller then filters first).
   */
  async function postFiltered(scope: Scope, query: Omit<SimilarityQuery, 'withVectors'>, matrix: VectorMatrix,
    callerBusy: boolean, excluded: ReadonlySet<number> | null): Promise<{ hits: MatrixHit[]; total: number } | null> {
    const threshold = query.minCosine - MIN_COSINE_SLACK;
    let all = await matrix.searchIn(vectors.pool(), query.vector, query.limit, threshold, null, { callerBusy, excluded });
    if (all.total > POST_FILTER_ROWS) return null;
    if (all.total > all.hits.length) all = await matrix.searchIn(vectors.pool(), query.vector, all.total, threshold, null, { callerBusy, excluded });
    if (all.total > all.hits.length) return null; // A write between the scans added rows: filter first.
    if (all.hits.length === 0) return all;
    const kept = new Set(keptAmong(scope, query.filter, all.hits.map((h) => h.key)));
    const hits = all.hits.filter((h) => kept.has(h.key));
    return { hits: hits.slice(0, query.limit), total: hits.length };
  }

  /**
   * Which of `seqs` are memories of the scope that `filter` keeps (validity aside): the filter checked on those rows
   * only, read by primary key (`+`: on the scope's indexes the planner walked the whole scope, ~10-20 ms at 100k).
   */
  function keptAmong(scope: Scope, filter: MemoryFilter, seqs: readonly number[]): number[] {
    const f = indexedFilterSql(filter);
    return prepared(`SELECT m.seq FROM memories m WHERE m.seq IN (SELECT value FROM json_each(?))
      AND +m.tenant_id = ? AND +m.mode = ? AND +m.workspace = ?${f.sql}`)
      .pluck().all(JSON.stringify(seqs), ...scopeParams(scope), ...f.params) as number[];
  }

  /**
   * Whether a condition of `filter` keeps under NARROW_SHARE of the scope's rows (a LIMIT tells): an indexed one, or
   * its types, topic or dates, counted on the scope's own indexes (a narrow date range after an unfiltered scan took a
   * second scan whenever more than `limit` rows reached the threshold).
   */
  function isNarrow(scope: Scope, filter: MemoryFilter, scopeRows: number): boolean {
    const cap = Math.ceil(NARROW_SHARE * scopeRows) + 1;
    return [...indexedConditions(filter), ...scopeConditions(scope, filter)].some((c) =>
      (prepared(`SELECT COUNT(*) FROM (${c.sql} LIMIT ?)`).pluck().get(...c.params, cap) as number) < cap);
  }

  /** `filter`'s types, topic and dates, each as SQL listing the scope's seqs it keeps (on the scope's indexes). */
  function scopeConditions(scope: Scope, filter: MemoryFilter): { sql: string; params: unknown[] }[] {
    const out: { sql: string; params: unknown[] }[] = [];
    const condition = (f: MemoryFilter) => {
      const { sql, params } = filterSql(f);
      out.push({ sql: `SELECT m.seq FROM memories m WHERE ${SCOPE_WHERE}${sql}`, params: [...scopeParams(scope), ...params] });
    };
    if (filter.types?.length) condition({ types: filter.types });
    if (filter.topicId !== undefined) condition({ topicId: filter.topicId });
    if (filter.createdFrom || filter.createdTo) condition({ createdFrom: filter.createdFrom, createdTo: filter.createdTo });
    return out;
  }

  /**
   * The similarity ranking by seq: the scope's index scanned, a filter's rows only (allowedSeqs). What a filter kept
   * (and the scan mask built from it) is cached per workspace, and brought forward over later writes by re-checking
   * the memories they changed (SqliteFilterCache, keptAmong): a repeated filter costs the masked scan alone, which is
   * no dearer than the unfiltered one, in a workspace written to between searches too (BENCHMARKS.md). A filter
   * not cached but made of cached conditions (a big workspace's broad tags, types and metadata values are read ahead:
   * SqliteBroadConditions) combines their bitmaps; else it is read first when narrow (isNarrow); a broad one, at a real
   * threshold, is first checked on the few rows above it (postFiltered: reading its many seqs would cost more), and
   * read once the answer is out, for the next search.
   */
  async function similarSeqs(scope: Scope, query: Omit<SimilarityQuery, 'withVectors'>, callerBusy: boolean) {
    const matrix = await vectors.get(scope, query.modelId, query.vector.length);
    // The few memories not valid at validAt are masked out of the scan (usually none: the plain scan).
    const seqs = exclusionsOf(scope, query.filter);
    const excluded = seqs ? new Set(seqs) : null;
    const threshold = query.minCosine - MIN_COSINE_SLACK;
    if (!hasFilter(query.filter)) return matrix.searchIn(vectors.pool(), query.vector, query.limit, threshold, null, { callerBusy, excluded });
    const found = await filteredScan(scope, query, matrix, threshold, callerBusy, excluded);
    if (broad.wanted(scope, matrix.size)) {
      // After the answer: the workspace's broad conditions, for the first searches of filters made of them.
      setImmediate(() => {
        broad.prefetch(scope, matrix.size).catch((err: unknown) => {
          if (db.open) log?.warn({ err }, 'could not read a workspace\'s broad filter conditions');
        });
      });
    }
    return found;
  }

  /** similarSeqs with a filter: from the cache, from cached conditions, after an unfiltered scan, or read first. */
  async function filteredScan(scope: Scope, query: Omit<SimilarityQuery, 'withVectors'>, matrix: VectorMatrix, threshold: number,
    callerBusy: boolean, excluded: ReadonlySet<number> | null) {
    const cached = filterCache.lookup(scope, query.filter);
    const composed = cached.allowed ? null : broad.compose(scope, query.filter);
    if (composed) {
      return matrix.searchIn(vectors.pool(), query.vector, query.limit, threshold, cached.fill(composed, matrix.size), { callerBusy, excluded });
    }
    if (!cached.allowed && threshold > -1 && !isNarrow(scope, query.filter, matrix.size)) {
      const post = await postFiltered(scope, query, matrix, callerBusy, excluded);
      if (post) {
        setImmediate(() => {
          try {
            cached.fill(allowedSeqs(scope, query.filter, matrix.size), matrix.size);
          } catch (err) {
            // Closed meanwhile: nothing to keep. Else the next search reads the filter itself, and reports what fails.
            if (db.open) log?.warn({ err }, 'could not read a similarity filter ahead of the next search');
          }
        });
        return post;
      }
    }
    const allowed = cached.allowed ?? cached.fill(allowedSeqs(scope, query.filter, matrix.size), matrix.size);
    return matrix.searchIn(vectors.pool(), query.vector, query.limit, threshold, allowed, { callerBusy, excluded });
  }

  /** The keyword ranking by seq; the filter runs inside its candidate query (a row it cannot read: retried guarded). */
  function keywordSeqs(scope: Scope, query: KeywordQuery) {
    const cap = query.candidatesPerTerm ?? KEYWORD_CANDIDATES_PER_TERM;
    // The memories not valid at validAt are left out of the candidates (usually none).
    const seqs = exclusionsOf(scope, query.filter);
    const excluded = seqs ? new Set(seqs) : null;
    if (!hasFilter(query.filter)) return keywordRanking.rank(scope, query.terms, null, query.limit, cap, excluded);
    return filtered(scope, query.filter, (f) => keywordRanking.rank(scope, query.terms, f, query.limit, cap, excluded));
  }

  /**
   * `m.seq IN (?, ...)` for `count` seqs, and the scope checked on each row found: a read by primary key (`+` keeps
   * the planner off the scope index, which would walk the whole scope instead of reading a few rows).
   * Parameters: the seqs, then scopeParams.
   */
  const seqsInScope = (count: number): string =>
    `m.seq IN (${new Array<string>(count).fill('?').join(', ')}) AND +m.tenant_id = ? AND +m.mode = ? AND +m.workspace = ?`;

  const writeTags = (seq: number, tags: readonly string[]) => {
    for (const tag of tags) insertTag.run(seq, tag);
  };

  const insertTx = db.transaction((m: Memory, v: StoredVector): number => {
    const { lastInsertRowid } = insertMemory.run(memoryParams(m, contentHash(m.content)));
    const seq = Number(lastInsertRowid);
    writeTags(seq, m.tags);
    upsertVector.run(seq, v.modelId, v.vector.length, vectorToBlob(v.vector));
    return seq;
  });

  const updateTx = db.transaction((scope: Scope, id: string, patch: MemoryPatch, at: number, by: string,
    v: StoredVector | null): MemoryRow | undefined => {
    // The state replaced first (nothing when the memory is absent: the update below finds nothing either).
    if (keepVersion.run(at, by, ...scopeParams(scope), id).changes === 0) return undefined;
    const sets: string[] = ['updated_by = ?', 'updated_at = MAX(?, updated_at + 1)', 'version = version + 1'];
    const params: unknown[] = [by, at];
    const column = (name: string, value: unknown) => { sets.push(`${name} = ?`); params.push(value); };
    if (patch.title !== undefined) column('title', patch.title);
    if (patch.content !== undefined) {
      column('content', patch.content);
      column('content_hash', contentHash(patch.content));
    }
    if (patch.memoryType !== undefined) column('memory_type', patch.memoryType);
    if (patch.tags !== undefined) column('tags', JSON.stringify(patch.tags));
    if (patch.metadata !== undefined) column('metadata', JSON.stringify(patch.metadata));
    if (patch.topicId !== undefined) column('topic_id', patch.topicId);
    if (patch.validFrom !== undefined) column('valid_from', patch.validFrom.getTime());
    if (patch.validUntil !== undefined) column('valid_until', patch.validUntil?.getTime() ?? null);
    const row = prepared<unknown[], MemoryRow>(
      `UPDATE memories AS m SET ${sets.join(', ')} WHERE ${SCOPE_WHERE} AND m.id = ? RETURNING *`,
    ).get(...params, ...scopeParams(scope), id);
    if (!row) return undefined;
    if (patch.tags !== undefined) {
      deleteTags.run(row.seq);
      writeTags(row.seq, patch.tags);
    }
    if (v) upsertVector.run(row.seq, v.modelId, v.vector.length, vectorToBlob(v.vector));
    return row;
  });

  /**
   * Deletes a memory, in the caller's transaction: the row (its tags, vectors and keyword entries follow it), its kept
   * versions, and what it left elsewhere (forgetMemoryTraces); a tombstone stays. Undefined when absent.
   */
  const forget = (scope: Scope, id: string, deletion: Deletion): MemoryRow | undefined => {
    const row = remove.get(...scopeParams(scope), id);
    if (!row) return undefined;
    dropVersions.run(...scopeParams(scope), id);
    writeTombstone.run(id, ...scopeParams(scope), deletion.at.getTime(), deletion.by, deletion.reason);
    forgetMemoryTraces(db, scope, id, row.client_id);
    return row;
  };

  /** Steps in one transaction; afterwards, the in-memory vector index follows what was committed. */
  const atomicTx = db.transaction((scope: Scope, steps: readonly AtomicStep[]) => {
    const before = versions.of(scope);
    const rows: MemoryRow[] = [];
    const events: StoredEvent[] = [];
    const notFound = (i: number) => new AtomicStepFailed(i, new DomainError('NOT_FOUND', 'Memory not found', { resource: 'memory' }));
    steps.forEach((step, i) => {
      switch (step.kind) {
        case 'insert': {
          try {
            insertTx(step.memory, step.vector);
          } catch (err) {
            const e = asConflict(err, step.memory);
            throw e instanceof DomainError ? new AtomicStepFailed(i, e) : e;
          }
          rows.push(byId.get(...scopeParams(scope), step.memory.id)!);
          break;
        }
        case 'update': {
          const row = updateTx(scope, step.id, step.patch, step.at.getTime(), step.by, step.vector);
          if (!row) throw notFound(i);
          rows.push(row);
          break;
        }
        case 'delete': {
          const row = forget(scope, step.id, step.deletion);
          if (!row) throw notFound(i);
          rows.push(row);
          break;
        }
        case 'supersede': {
          // Not a version (no content changes): the chain is read apart (findSupersededBy).
          const row = supersede.get(step.by, step.validUntil.getTime(), ...scopeParams(scope), step.id);
          if (!row) throw notFound(i);
          rows.push(row);
          break;
        }
        case 'read': {
          const row = touch.get(step.at.getTime(), ...scopeParams(scope), step.id);
          if (!row) throw notFound(i);
          rows.push(row);
          break;
        }
      }
      if (step.events) events.push(...outbox.appendInTx(step.events(toMemory(rows[i]!))));
    });
    return { rows, events, before, after: versions.of(scope) };
  });

  /** A single write and its events in one transaction. */
  // Each write reads its workspace's version before and after itself, in its transaction (see noteWrite).
  const insertWithEvents = db.transaction((m: Memory, v: StoredVector, events?: EventsFor) => {
    const before = versions.of(m.scope);
    const seq = insertTx(m, v);
    return { seq, stored: events ? outbox.appendInTx(events(m)) : [], before, after: versions.of(m.scope) };
  });
  /** The check and the insert under one write lock (IMMEDIATE), so racing creates of one content store it once. */
  const insertUnlessDuplicateTx = db.transaction((m: Memory, v: StoredVector, events?: EventsFor) => {
    const existing = byContentHash.get(...scopeParams(m.scope), contentHash(m.content));
    if (existing) return { existing };
    const before = versions.of(m.scope);
    const seq = insertTx(m, v);
    return { written: { seq, stored: events ? outbox.appendInTx(events(m)) : [], before, after: versions.of(m.scope) } };
  });
  const updateWithEvents = db.transaction((scope: Scope, id: string, patch: MemoryPatch, at: number, by: string,
    v: StoredVector | null, events?: EventsFor) => {
    const before = versions.of(scope);
    const row = updateTx(scope, id, patch, at, by, v);
    return row ? { row, stored: events ? outbox.appendInTx(events(toMemory(row))) : [], before, after: versions.of(scope) } : null;
  });
  const deleteWithEvents = db.transaction((scope: Scope, id: string, deletion: Deletion, events?: EventsFor) => {
    const before = versions.of(scope);
    const row = forget(scope, id, deletion);
    return row ? { row, stored: events ? outbox.appendInTx(events(toMemory(row))) : [], before, after: versions.of(scope) } : null;
  });

  return {
    ...createSqliteMemoryMaintenance(db, keywordRanking),
    async warmUp() {
      await vectors.warmUp();
      await broad.prefetchAll();
    },
    async close() {
      // Graceful shutdown keeps the writes already asked for: they commit now, and their callers' in-memory steps
      // (indexes, listeners; some read the connection) run before the next macrotask, so before the store closes.
      group.close();
      await new Promise<void>((resolve) => setImmediate(resolve));
      await vectors.close();
    },
    groupCommit: group.stats,

    async applyAtomically(scope, steps) {
      const { rows, events, before, after } = atomicTx(scope, steps);
      outbox.notify(events);
      steps.forEach((step, i) => {
        const row = rows[i]!;
        if (step.kind === 'delete') {
          vectors.remove(scope, row.seq);
          keywordRanking.removed(scope, row.seq);
        } else if (step.kind === 'insert' || step.kind === 'update') {
          if (step.vector) vectors.upsert(scope, step.vector.modelId, row.seq, step.vector.vector);
          keywordRanking.written(scope, row.seq);
        }
      });
      vectors.noteWrite(scope, before, after);
      if (steps.some((step) => step.kind === 'delete')) vectors.forgotten(scope);
      return rows.map(toMemory);
    },

    async insert(memory, vector, events) {
      let written: { seq: number; stored: StoredEvent[]; before: number; after: number };
      try {
        // Shares a COMMIT (one fsync) with the creates that arrived in the same tick; see SqliteGroupCommit.
        written = await group.run(() => insertWithEvents(memory, vector, events));
      } catch (err) {
        throw asConflict(err, memory);
      }
      vectors.upsert(memory.scope, vector.modelId, written.seq, vector.vector);
      vectors.noteWrite(memory.scope, written.before, written.after);
      keywordRanking.written(memory.scope, written.seq);
      outbox.notify(written.stored);
    },

    async insertUnlessDuplicate(memory, vector, events) {
      let result: ReturnType<typeof insertUnlessDuplicateTx>;
      try {
        // In a group the check still sees every earlier write of the group (same connection, same transaction).
        result = await group.run(() => insertUnlessDuplicateTx.immediate(memory, vector, events));
      } catch (err) {
        throw asConflict(err, memory);
      }
      if (result.existing) return toMemory(result.existing);
      const written = result.written!;
      vectors.upsert(memory.scope, vector.modelId, written.seq, vector.vector);
      vectors.noteWrite(memory.scope, written.before, written.after);
      keywordRanking.written(memory.scope, written.seq);
      outbox.notify(written.stored);
      return null;
    },

    async findByContent(scope, content) {
      const row = byContentHash.get(...scopeParams(scope), contentHash(content));
      return row ? toMemory(row) : null;
    },

    async findById(scope, id) {
      const row = byId.get(...scopeParams(scope), id);
      return row ? toMemory(row) : null;
    },

    async findByClientId(scope, clientId) {
      const row = byClientId.get(...scopeParams(scope), clientId);
      return row ? toMemory(row) : null;
    },

    async usage(scope, { since, top }) {
      const sp = scopeParams(scope);
      const t = since.getTime();
      const totals = db.prepare<unknown[], { total: number; bytes: number | null; accesses: number | null; created: number | null; updated: number | null }>(
        `SELECT COUNT(*) AS total, SUM(length(CAST(m.title AS BLOB)) + length(CAST(m.content AS BLOB))) AS bytes,
           SUM(m.access_count) AS accesses, SUM(m.created_at >= ?) AS created, SUM(m.updated_at >= ? AND m.updated_at > m.created_at) AS updated
         FROM memories m WHERE ${SCOPE_WHERE}`).get(t, t, ...sp)!;
      const types = db.prepare<unknown[], { memory_type: string; n: number }>(
        `SELECT m.memory_type, COUNT(*) AS n FROM memories m WHERE ${SCOPE_WHERE} GROUP BY m.memory_type`).all(...sp);
      const most = db.prepare<unknown[], MemoryRow>(
        `SELECT m.* FROM memories m WHERE ${SCOPE_WHERE} AND m.access_count > 0 ORDER BY m.access_count DESC, m.id LIMIT ?`).all(...sp, top);
      const tags = db.prepare<unknown[], { tag: string; n: number }>(
        `SELECT t.tag, COUNT(*) AS n FROM memory_tags t JOIN memories m ON m.seq = t.memory_seq WHERE ${SCOPE_WHERE}
         GROUP BY t.tag ORDER BY n DESC, t.tag LIMIT ?`).all(...sp, top);
      return {
        total: totals.total, byType: Object.fromEntries(types.map((r) => [r.memory_type, r.n])), bytes: totals.bytes ?? 0,
        totalAccesses: totals.accesses ?? 0, mostAccessed: most.map(toMemory), createdSince: totals.created ?? 0,
        updatedSince: totals.updated ?? 0, topTags: tags.map((r) => ({ tag: r.tag, count: r.n })),
      };
    },

    async countByTopic(scope, topicIds) {
      if (topicIds.length === 0) return new Map();
      const rows = db.prepare<unknown[], { topic_id: string; n: number }>(
        `SELECT m.topic_id, COUNT(*) AS n FROM memories m WHERE ${SCOPE_WHERE}
         AND m.topic_id IN (${topicIds.map(() => '?').join(', ')}) GROUP BY m.topic_id`,
      ).all(...scopeParams(scope), ...topicIds);
      return new Map(rows.map((r) => [r.topic_id, r.n]));
    },

    async findIdsByPrefix(scope, prefix, limit) {
      // A range scan on the (scope, id) index: ids >= prefix and < prefix with its last char incremented.
      const upper = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
      return idsByPrefix.all(...scopeParams(scope), prefix, upper, limit).map((r) => r.id);
    },

    async recordAccess(scope, id, at) {
      const row = touch.get(at.getTime(), ...scopeParams(scope), id);
      return row ? toMemory(row) : null;
    },

    async update(scope, id, patch, at, by, vector, events) {
      const written = await group.run(() => updateWithEvents(scope, id, patch, at.getTime(), by, vector, events));
      if (!written) return null;
      if (vector) vectors.upsert(scope, vector.modelId, written.row.seq, vector.vector);
      vectors.noteWrite(scope, written.before, written.after);
      keywordRanking.written(scope, written.row.seq);
      outbox.notify(written.stored);
      return toMemory(written.row);
    },

    async delete(scope, id, deletion, events) {
      const written = await group.run(() => deleteWithEvents(scope, id, deletion, events));
      if (!written) return false;
      vectors.remove(scope, written.row.seq);
      vectors.noteWrite(scope, written.before, written.after);
      vectors.forgotten(scope);
      keywordRanking.removed(scope, written.row.seq);
      outbox.notify(written.stored);
      return true;
    },

    async list(scope, query: ListQuery) {
      const order = `${SORT_COLUMNS[query.sortBy]} ${query.sortOrder === 'asc' ? 'ASC' : 'DESC'}, m.seq ${
        query.sortOrder === 'asc' ? 'ASC' : 'DESC'}`;
      // The few memories not valid at validAt (usually none) are left out by seq: the count stays index-only, the
      // excluded ones matching the filter taken off it (all of them, without a filter).
      const excluded = exclusionsOf(scope, query.filter);
      const excludedJson = excluded ? JSON.stringify(excluded) : null;
      return filtered(scope, query.filter, (f) => {
        const where = `FROM memories m WHERE ${SCOPE_WHERE}${f.sql}`;
        const params = [...scopeParams(scope), ...f.params];
        let total = prepared<unknown[], number>(`SELECT COUNT(*) ${where}`).pluck().get(...params)!;
        if (excluded) {
          total -= f.sql === '' ? excluded.length : prepared<unknown[], number>(
            `SELECT COUNT(*) FROM memories m WHERE m.seq IN (SELECT value FROM json_each(?))
             AND +m.tenant_id = ? AND +m.mode = ? AND +m.workspace = ?${f.sql}`).pluck().get(excludedJson, ...params)!;
        }
        const rows = prepared<unknown[], MemoryRow>(`SELECT m.* ${where}${excluded ? NOT_EXCLUDED_SQL : ''} ORDER BY ${order} LIMIT ? OFFSET ?`)
          .all(...params, ...(excluded ? [excludedJson] : []), query.limit, query.offset);
        return { items: rows.map(toMemory), total };
      });
    },

    async searchSimilar(scope, query) {
      const { hits, total } = await similarSeqs(scope, query, false);
      if (hits.length === 0) return { hits: [], total };
      const rows = prepared<number[], MemoryRow>(
        `SELECT * FROM memories WHERE seq IN (${hits.map(() => '?').join(', ')})`).all(...hits.map((h) => h.key));
      const bySeq = new Map(rows.map((r) => [r.seq, r]));
      const vectorsBySeq = query.withVectors ? vectorsForSeqs(hits.map((h) => h.key), query.modelId) : null;
      const out: SimilarityHit[] = [];
      for (const h of hits) {
        const row = bySeq.get(h.key);
        if (row) {
          out.push({
            memory: toMemory(row), cosine: h.cosine,
            ...(vectorsBySeq ? { vector: vectorsBySeq.get(h.key) } : {}),
          });
        }
      }
      return { hits: out, total };
    },

    // Refs are the rows' seqs: both rankings have them without a lookup, and rows are read by primary key. The
    // caller ranks keywords on this thread meanwhile (the port's rankSimilar), so the scan leaves it a core.
    async rankSimilar(scope, query) {
      const { hits, total } = await similarSeqs(scope, query, true);
      return { hits: hits.map((h) => ({ ref: h.key, cosine: h.cosine })), total };
    },

    async searchKeyword(scope, query) {
      const { hits, total } = keywordSeqs(scope, query);
      if (hits.length === 0) return { hits: [], total };
      const rows = prepared<unknown[], MemoryRow>(`SELECT m.* FROM memories m WHERE ${seqsInScope(hits.length)}`).all(...hits.map((h) => h.seq), ...scopeParams(scope));
      const bySeq = new Map(rows.map((r) => [r.seq, r]));
      return { hits: toKeywordHits(hits, (seq) => { const row = bySeq.get(seq); return row && { memory: toMemory(row) }; }), total };
    },

    async rankKeyword(scope, query) {
      const { hits, total } = keywordSeqs(scope, query);
      return { hits: toKeywordCandidates(hits), total };
    },

    async cosinesOf(scope, refs, { vector, modelId }) {
      const out = new Map<MemoryRef, number>();
      const seqs = seqsOf(refs);
      if (seqs.length === 0) return out;
      const dims = vector.length;
      const stored = prepared<unknown[], { seq: number; vector: Buffer }>(
        `SELECT m.seq, v.vector FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq
         WHERE ${seqsInScope(seqs.length)} AND v.model_id = ? AND v.dims = ?`,
      ).all(...seqs, ...scopeParams(scope), modelId, dims);
      // Scored by the scan's own re-rank function (vector-scan/rerank.ts), so a memory both legs find has one cosine;
      // an all-zero query scores 0.
      const query = new Float32Array(dims);
      unitRowInto(vector, dims, query);
      const scores = exactScores({ read: (i) => floatView(stored[i]!.vector, dims) }, query, stored.map((_, i) => i));
      stored.forEach((r, i) => out.set(r.seq, scores[i]!));
      return out;
    },

    // From the scope's in-memory index (its int8 codes), only when it is loaded and current: nothing is loaded for
    // an estimate, and an index lagging another connection's writes could hold codes of an older vector. Asked to
    // sharpen, the first-level codes bound every ref (error about 1e-2, a tenth of the cost) and both levels only
    // those the caller names (error about 1e-4).
    async cosineEstimatesOf(scope, refs, { vector, modelId }, sharpen) {
      const seqs = seqsOf(refs);
      const matrix = seqs.length > 0 ? vectors.current(scope, modelId, vector.length) : null;
      if (!matrix) return new Map();
      if (!sharpen) return matrix.estimates(vector, seqs);
      const bounds: Map<MemoryRef, CosineEstimate> = matrix.estimates(vector, seqs, 'coarse');
      const unsure = bounds.size > 0 ? seqsOf(sharpen(bounds)).filter((seq) => bounds.has(seq)) : [];
      if (unsure.length > 0) matrix.estimates(vector, unsure).forEach((e, seq) => bounds.set(seq, e));
      return bounds;
    },

    async findByRefs(scope, refs) {
      const seqs = seqsOf(refs);
      if (seqs.length === 0) return new Map();
      const rows = prepared<unknown[], MemoryRow>(`SELECT m.* FROM memories m WHERE ${seqsInScope(seqs.length)}`).all(...seqs, ...scopeParams(scope));
      return new Map(rows.map((r) => [r.seq, toMemory(r)]));
    },

    async vectorsOf(scope, ids, modelId) {
      if (ids.length === 0) return new Map();
      const rows = prepared<unknown[], { id: string; vector: Buffer }>(
        `SELECT m.id, v.vector FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq
         WHERE ${SCOPE_WHERE} AND v.model_id = ? AND m.id IN (${ids.map(() => '?').join(', ')})`,
      ).all(...scopeParams(scope), modelId, ...ids);
      return new Map(rows.map((r) => [r.id, blobToVector(r.vector)]));
    },

    async suggestTags(scope, prefix, limit, validAt) {
      const excluded = exclusionsOf(scope, { validAt });
      return prepared<unknown[], { text: string; frequency: number }>(
        `SELECT t.tag AS text, COUNT(*) AS frequency FROM memory_tags t JOIN memories m ON m.seq = t.memory_seq
         WHERE ${SCOPE_WHERE} AND t.tag LIKE ? ESCAPE '\\'${excluded ? NOT_EXCLUDED_SQL : ''}
         GROUP BY t.tag ORDER BY frequency DESC, t.tag LIMIT ?`,
      ).all(...scopeParams(scope), `${likeLiteral(prefix)}%`, ...(excluded ? [JSON.stringify(excluded)] : []), limit);
    },

    async suggestTitles(scope, text, limit, validAt) {
      const excluded = exclusionsOf(scope, { validAt });
      return prepared<unknown[], { text: string; frequency: number }>(
        `SELECT m.title AS text, COUNT(*) AS frequency FROM memories m
         WHERE ${SCOPE_WHERE} AND m.title LIKE ? ESCAPE '\\'${excluded ? NOT_EXCLUDED_SQL : ''}
         GROUP BY m.title ORDER BY (m.title LIKE ? ESCAPE '\\') DESC, frequency DESC, m.title LIMIT ?`,
      ).all(...scopeParams(scope), `%${likeLiteral(text)}%`, ...(excluded ? [JSON.stringify(excluded)] : []),
        `${likeLiteral(text)}%`, limit);
    },

    async history(scope, id, page) {
      const total = versionCount.get(...scopeParams(scope), id)!;
      if (total === 0) return { versions: [], total };
      return { versions: versionPage.all(...scopeParams(scope), id, page.limit, page.offset).map(toMemoryVersion), total };
    },

    async findSupersededBy(scope, id) {
      return supersededBy.all(...scopeParams(scope), id).sort((a, b) => a.created_at - b.created_at || a.seq - b.seq).map(toMemory);
    },

    async tombstoneOf(scope, id) {
      const row = tombstone.get(id, ...scopeParams(scope));
      return row ? toMemoryTombstone(row) : null;
    },
  };
}
