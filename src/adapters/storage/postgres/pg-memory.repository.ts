import {
  AtomicStepFailed, MIN_COSINE_SLACK, type AtomicStep, type Deletion, type EventsFor, type MemoryRepository,
} from '../../../core/memories/memory.repository.ts';
import {
  KEYWORD_CANDIDATES_PER_TERM, type ListQuery, type Memory, type MemoryFilter, type MemoryPatch, type SimilarityHit,
  type StoredVector,
} from '../../../core/memories/memory.types.ts';
import { DomainError } from '../../../core/errors.ts';
import type { NewEvent, StoredEvent } from '../../../core/events/event.types.ts';
import type { Scope } from '../../../core/scope.ts';
import {
  pgInt, pgJson, pgTime, pipelinedTransaction, SqlParams, type PgExecutor, type PgQueryable, type PgStatement,
} from './pg-executor.ts';
import { excludedAtSql, filterSql, scopeSql, validAtSql } from './pg-memory-filter.ts';
import {
  MEMORY_COLUMNS, MEMORY_INSERT_COLUMNS, MEMORY_UNNEST, MEMORY_UNNEST_SELECT, memoryColumns, memoryInsertArrays, toMemory,
  toMemoryTombstone, toMemoryVersion, VERSION_COLUMNS, type MemoryRow, type MemoryTombstoneRow, type MemoryVersionRow,
} from './pg-memory-row.ts';
import { forgetMemoryTraces, lockIngestionOf } from './pg-forget-traces.ts';
import { seqsOf } from '../memory-refs.ts';
import { rankKeywords } from './pg-keyword-ranking.ts';
import type { PgKeywordIndex } from './pg-keyword-index.ts';
import type { PgEventRow, PgOutbox } from './pg-outbox.ts';
import { cosinesOf, parseVector, PgVectorIndexes, searchVectors, vectorText, type VectorSearchOptions } from './pg-vector-search.ts';
import { toKeywordCandidates, toKeywordHits } from '../bm25.ts';
import { createPgMemoryMaintenance } from './pg-memory-maintenance.ts';
import { contentHash } from '../../../core/memories/content-hash.ts';

type Row = MemoryRow;

const M_COLUMNS = memoryColumns('m');
const RETURNING = `RETURNING ${MEMORY_COLUMNS.join(', ')}`;

/** The domain's CONFLICT for a memory whose client id is taken. */
function conflictOf(memory: Memory): DomainError {
  return new DomainError('CONFLICT', `A memory with id ${memory.clientId} already exists`, {
    fields: [{ field: 'id', reason: 'conflict', message: 'already exists' }],
  });
}

/** `%`, `_` and `\` taken literally in a LIKE pattern (with ESCAPE '\'). */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

const SORT_COLUMNS = { created_at: 'm.created_at', updated_at: 'm.updated_at', title: 'm.title COLLATE "C"' } as const;

/** Content hashes of rows written before the column existed (see the migration 'memory content hashes'). */
export async function backfillPgContentHashes(db: PgExecutor): Promise<void> {
  for (;;) {
    const rows = await db.query<{ seq: number | string; content: string }>(
      'SELECT seq, content FROM memories WHERE content_hash IS NULL LIMIT 1000');
    if (rows.length === 0) return;
    await db.transaction(async (tx) => {
      for (const r of rows) await tx.query('UPDATE memories SET content_hash = $1 WHERE seq = $2', [contentHash(r.content), String(r.seq)]);
    });
  }
}

export function createPgMemoryRepository(db: PgExecutor, outbox: PgOutbox,
  options: VectorSearchOptions & { keywordIndex?: PgKeywordIndex | null }): MemoryRepository {
  // No HNSW index when vectors are scored in memory (options.index): it would only cost writes.
  const indexes = new PgVectorIndexes(db, !options.index);

  async function upsertVector(tx: PgQueryable, seq: number, v: StoredVector): Promise<void> {
    // A write that (re-)embeds a memory replaces every vector it has: vectors of other models (a reindex's) were made
    // from the old text. mnemo reindex adds them back (MemoryMaintenance.putVectors).
    await tx.query('DELETE FROM memory_vectors WHERE memory_seq = $1 AND model_id <> $2', [seq, v.modelId]);
    await tx.query(`INSERT INTO memory_vectors (memory_seq, model_id, dims, embedding) VALUES ($1, $2, $3, $4::vector)
      ON CONFLICT (memory_seq, model_id) DO UPDATE SET dims = EXCLUDED.dims, embedding = EXCLUDED.embedding`,
    [seq, v.modelId, v.vector.length, vectorText(v.vector)]);
  }

  /**
   * The statement that inserts memories and their vectors, whatever their number (the keywords come from the row
   * trigger): rows in the order given, so their seqs follow it, and only where `guard` holds (built on the same
   * parameters). A memory whose client id is taken (by a stored memory or an earlier one of these) is skipped; the
   * caller fails it as a CONFLICT and rolls back. A new row has no vectors yet, so none of another model needs deleting
   * (as upsertVector does).
   */
  function insertRowsStatement(items: readonly { memory: Memory; vector: StoredVector }[], guard?: (p: SqlParams) => string): PgStatement {
    const vectors = items.map((it) => vectorText(it.vector.vector));
    const p = new SqlParams(memoryInsertArrays(items.map((it) => it.memory)));
    const model = p.add(items.map((it) => it.vector.modelId));
    const dims = p.add(items.map((it) => it.vector.vector.length));
    const embedding = p.add(vectors);
    const where = guard ? `WHERE ${guard(p)}` : '';
    return {
      sql: `WITH x AS (
        SELECT x.*, v.model_id, v.dims, v.embedding FROM ${MEMORY_UNNEST}
        JOIN unnest(${model}::text[], ${dims}::int[], ${embedding}::text[]) WITH ORDINALITY AS v(model_id, dims, embedding, ord) ON v.ord = x.ord
        ${where}
      ), ins AS (
        INSERT INTO memories (${MEMORY_INSERT_COLUMNS}) SELECT ${MEMORY_UNNEST_SELECT} FROM x ORDER BY x.ord
        ON CONFLICT (tenant_id, mode, workspace, client_id) WHERE client_id IS NOT NULL DO NOTHING
        ${RETURNING}
      ), vec AS (
        INSERT INTO memory_vectors (memory_seq, model_id, dims, embedding)
        SELECT ins.seq, x.model_id, x.dims, x.embedding::vector FROM ins JOIN x ON x.id = ins.id
      )
      SELECT * FROM ins`,
      params: p.values,
    };
  }

  /** insertRowsStatement in the caller's transaction: each memory's row, or undefined where it was skipped. */
  async function insertRows(tx: PgQueryable, items: readonly { memory: Memory; vector: StoredVector }[]): Promise<(Row | undefined)[]> {
    const statement = insertRowsStatement(items);
    return inOrder(items, await tx.query<Row>(statement.sql, statement.params));
  }

  function inOrder(items: readonly { memory: Memory }[], rows: readonly Row[]): (Row | undefined)[] {
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((it) => byId.get(it.memory.id));
  }

  /**
   * A create whose events no webhook can want, as one pipelined transaction (one round trip on a server): the row and
   * its vector, inserted only if no candidate webhook is active; the event lock; the events, inserted only if the row
   * was (its id is new: nothing else holds it). The events are built from `memory` as given, before the row exists:
   * the row holds what was given (the seq is not part of a Memory; NUL and lone surrogates become U+FFFD in the row
   * and in the events' JSON alike). False when nothing was written (a candidate webhook, or a taken client id): the
   * caller then runs the transaction that reads them.
   */
  async function insertPipelined(memory: Memory, vector: StoredVector, events: readonly NewEvent[]): Promise<boolean> {
    const row = insertRowsStatement([{ memory, vector }], events.length > 0 ? (p) => outbox.noCandidateWebhooks(events, p) : undefined);
    const append = outbox.pipelinedAppend(events, (p) => `EXISTS (SELECT 1 FROM memories m WHERE m.tenant_id = ${p.add(memory.scope.tenantId)}
      AND m.mode = ${p.add(memory.scope.mode)} AND m.workspace = ${p.add(memory.scope.workspace)} AND m.id = ${p.add(memory.id)})`);
    const results = await pipelinedTransaction(db, events.length > 0 ? [row, ...append.statements] : [row]);
    if (results[0]!.length === 0) return false;
    const stored = events.length > 0 ? append.storedBy(results.at(-1) as PgEventRow[]) : [];
    if (!stored) throw new Error(`the events of memory ${memory.id} were not appended with it`);
    outbox.notify(stored);
    return true;
  }

  async function insertIn(tx: PgQueryable, m: Memory, v: StoredVector): Promise<Row> {
    const [row] = await insertRows(tx, [{ memory: m, vector: v }]);
    if (!row) throw conflictOf(m);
    return row;
  }

  /**
   * Applies a patch in one statement: the row is locked and read (`old`), its state kept as a version (written as the
   * row has it, replaced by this update's time and author), and the patched row gets the next version. Racing updates
   * of one memory take turns on the row lock, each keeping the state the other left.
   */
  async function updateIn(tx: PgQueryable, scope: Scope, id: string, patch: MemoryPatch, at: Date, by: string,
    v: StoredVector | null): Promise<Row | undefined> {
    const p = new SqlParams();
    const time = `${p.add(pgTime(at))}::timestamptz`;
    const author = p.add(by);
    // updated_at always moves forward, even when the clock did not.
    const sets = [`updated_by = ${author}`, `updated_at = GREATEST(${time}, m.updated_at + interval '1 millisecond')`,
      'version = m.version + 1'];
    const set = (column: string, value: unknown, cast = '') => sets.push(`${column} = ${p.add(value)}${cast}`);
    if (patch.title !== undefined) set('title', patch.title);
    if (patch.content !== undefined) {
      set('content', patch.content);
      set('content_hash', contentHash(patch.content));
    }
    if (patch.memoryType !== undefined) set('memory_type', patch.memoryType);
    if (patch.tags !== undefined) set('tags', patch.tags, '::text[]');
    if (patch.metadata !== undefined) set('metadata', pgJson(patch.metadata), '::jsonb');
    if (patch.topicId !== undefined) set('topic_id', patch.topicId);
    if (patch.validFrom !== undefined) set('valid_from', pgTime(patch.validFrom), '::timestamptz');
    if (patch.validUntil !== undefined) set('valid_until', patch.validUntil === null ? null : pgTime(patch.validUntil), '::timestamptz');
    const [row] = await tx.query<Row>(`WITH old AS (
        SELECT o.* FROM memories o WHERE ${scopeSql(p, scope, 'o')} AND o.id = ${p.add(id)} FOR UPDATE
      ), kept AS (
        INSERT INTO memory_versions (memory_id, version, tenant_id, mode, workspace, title, content, memory_type, tags, metadata,
          topic_id, valid_from, valid_until, written_at, written_by, replaced_at, replaced_by)
        SELECT old.id, old.version, old.tenant_id, old.mode, old.workspace, old.title, old.content, old.memory_type, old.tags,
          old.metadata, old.topic_id, old.valid_from, old.valid_until, old.updated_at, old.updated_by, ${time}, ${author} FROM old
        ON CONFLICT (memory_id, version) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, mode = EXCLUDED.mode,
          workspace = EXCLUDED.workspace, title = EXCLUDED.title, content = EXCLUDED.content, memory_type = EXCLUDED.memory_type,
          tags = EXCLUDED.tags, metadata = EXCLUDED.metadata, topic_id = EXCLUDED.topic_id, valid_from = EXCLUDED.valid_from,
          valid_until = EXCLUDED.valid_until, written_at = EXCLUDED.written_at, written_by = EXCLUDED.written_by,
          replaced_at = EXCLUDED.replaced_at, replaced_by = EXCLUDED.replaced_by
      )
      UPDATE memories AS m SET ${sets.join(', ')} FROM old WHERE m.seq = old.seq RETURNING ${M_COLUMNS}`,
    p.values);
    if (row && v) await upsertVector(tx, pgInt(row.seq), v);
    return row;
  }

  /**
   * Forgets a memory, in the caller's transaction: the row (its vectors follow it: ON DELETE CASCADE; tags and keywords
   * are columns of it) and its kept versions go, a tombstone stays (the latest deletion's, should the id come back and
   * go again), and what it left elsewhere goes too (forgetMemoryTraces). Undefined when absent.
   */
  async function deleteIn(tx: PgQueryable, scope: Scope, id: string, deletion: Deletion): Promise<Row | undefined> {
    await lockIngestionOf(tx, scope, id);
    const p = new SqlParams();
    const [row] = await tx.query<Row>(`WITH gone AS (
        DELETE FROM memories AS m WHERE ${scopeSql(p, scope)} AND m.id = ${p.add(id)} ${RETURNING}
      ), versions AS (
        DELETE FROM memory_versions v USING gone
        WHERE v.memory_id = gone.id AND v.tenant_id = gone.tenant_id AND v.mode = gone.mode AND v.workspace = gone.workspace
      ), tombstone AS (
        INSERT INTO memory_tombstones (memory_id, tenant_id, mode, workspace, deleted_at, deleted_by, reason)
        SELECT gone.id, gone.tenant_id, gone.mode, gone.workspace, ${p.add(pgTime(deletion.at))}::timestamptz,
          ${p.add(deletion.by)}, ${p.add(deletion.reason)} FROM gone
        ON CONFLICT (memory_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, mode = EXCLUDED.mode,
          workspace = EXCLUDED.workspace, deleted_at = EXCLUDED.deleted_at, deleted_by = EXCLUDED.deleted_by,
          reason = EXCLUDED.reason
      )
      SELECT * FROM gone`, p.values);
    if (row) await forgetMemoryTraces(tx, scope, id, row.client_id);
    return row;
  }

  /** Marks memory `id` replaced by `by` (not a version: its content does not change). Undefined when absent. */
  async function supersedeIn(tx: PgQueryable, scope: Scope, id: string, by: string, validUntil: Date): Promise<Row | undefined> {
    const p = new SqlParams();
    const [row] = await tx.query<Row>(`UPDATE memories AS m SET superseded_by = ${p.add(by)},
      valid_until = ${p.add(pgTime(validUntil))}::timestamptz WHERE ${scopeSql(p, scope)} AND m.id = ${p.add(id)} ${RETURNING}`, p.values);
    return row;
  }

  async function touchIn(tx: PgQueryable, scope: Scope, id: string, at: Date): Promise<Row | undefined> {
    const p = new SqlParams();
    const [row] = await tx.query<Row>(`UPDATE memories AS m SET access_count = access_count + 1, last_accessed = ${p.add(pgTime(at))}
      WHERE ${scopeSql(p, scope)} AND m.id = ${p.add(id)} ${RETURNING}`, p.values);
    return row;
  }

  async function byColumn(scope: Scope, column: 'id' | 'client_id', value: string): Promise<Memory | null> {
    const p = new SqlParams();
    const [row] = await db.query<Row>(`SELECT ${M_COLUMNS} FROM memories m WHERE ${scopeSql(p, scope)} AND m.${column} = ${p.add(value)}`, p.values);
    return row ? toMemory(row) : null;
  }

  /** The scope's oldest memory with this content hash. */
  async function byContentHash(q: PgQueryable, scope: Scope, hash: string): Promise<Row | undefined> {
    const p = new SqlParams();
    const [row] = await q.query<Row>(`SELECT ${M_COLUMNS} FROM memories m WHERE ${scopeSql(p, scope)}
      AND m.content_hash = ${p.add(hash)} ORDER BY m.seq LIMIT 1`, p.values);
    return row;
  }

  /** The memories of the scope with these seqs, in the order given. */
  async function rowsBySeq(scope: Scope, seqs: readonly number[]): Promise<Map<number, Row>> {
    const p = new SqlParams();
    const rows = await db.query<Row>(`SELECT ${M_COLUMNS} FROM memories m WHERE ${scopeSql(p, scope)}
      AND m.seq = ANY(${p.add(seqs.map(String))}::bigint[])`, p.values);
    return new Map(rows.map((r) => [pgInt(r.seq), r]));
  }

  /** BM25 over the scope's keywords: in the node's keyword index when it keeps one, else in SQL (the same answers). */
  function keywordRanking(scope: Scope, words: readonly string[], filter: MemoryFilter, limit: number, cap: number) {
    return options.keywordIndex
      ? options.keywordIndex.rank(scope, words, filter, limit, cap)
      : rankKeywords(db, scope, words, filter, limit, cap);
  }

  /** A write and the events it emits, in one transaction; listeners hear of the events after the commit. */
  async function withEvents<T extends Row | undefined>(write: (tx: PgQueryable) => Promise<T>, events?: EventsFor): Promise<T> {
    const { row, stored } = await db.transaction(async (tx) => {
      const written = await write(tx);
      return { row: written, stored: written && events ? await outbox.appendInTx(tx, events(toMemory(written))) : [] };
    });
    outbox.notify(stored);
    return row;
  }

  return {
    ...createPgMemoryMaintenance(db, indexes),

    async applyAtomically(scope, steps: readonly AtomicStep[]) {
      const vectorModels = steps.flatMap((s) => (s.kind === 'insert' || s.kind === 'update') && s.vector ? [s.vector] : []);
      for (const v of vectorModels) await indexes.ensure(v.modelId, v.vector.length);
      const notFound = (i: number) => new AtomicStepFailed(i, new DomainError('NOT_FOUND', 'Memory not found', { resource: 'memory' }));
      const { rows, events } = await db.transaction(async (tx) => {
        const rows: Row[] = [];
        const events: StoredEvent[] = [];
        for (let i = 0; i < steps.length; i++) {
          const step = steps[i]!;
          if (step.kind === 'insert') {
            // A run of consecutive inserts (a G6 batch of creates): one statement for the rows and their vectors, one
            // for their events, in step order; the first conflicting step fails the group as it would one by one.
            let end = i + 1;
            while (end < steps.length && steps[end]!.kind === 'insert') end++;
            const run = steps.slice(i, end) as (AtomicStep & { kind: 'insert' })[];
            const inserted = await insertRows(tx, run);
            const missing = inserted.findIndex((r) => r === undefined);
            if (missing >= 0) throw new AtomicStepFailed(i + missing, conflictOf(run[missing]!.memory));
            rows.push(...inserted as Row[]);
            const runEvents = run.flatMap((s, k) => (s.events ? s.events(toMemory(inserted[k]!)) : []));
            events.push(...await outbox.appendInTx(tx, runEvents));
            i = end - 1;
            continue;
          }
          let row: Row | undefined;
          switch (step.kind) {
            case 'update':
              row = await updateIn(tx, scope, step.id, step.patch, step.at, step.by, step.vector);
              break;
            case 'delete':
              row = await deleteIn(tx, scope, step.id, step.deletion);
              break;
            case 'supersede':
              row = await supersedeIn(tx, scope, step.id, step.by, step.validUntil);
              break;
            case 'read':
              row = await touchIn(tx, scope, step.id, step.at);
              break;
          }
          if (!row) throw notFound(i);
          rows.push(row);
          if (step.events) events.push(...await outbox.appendInTx(tx, step.events(toMemory(row))));
        }
        return { rows, events };
      });
      outbox.notify(events);
      return rows.map(toMemory);
    },

    async insert(memory, vector, events) {
      if (vector?.vector) await indexes.ensure(vector.modelId, vector.vector.length);
      const built = events ? events(memory) : [];
      if (await insertPipelined(memory, vector, built)) return;
      await withEvents((tx) => insertIn(tx, memory, vector), () => built);
    },

    async insertUnlessDuplicate(memory, vector, events) {
      if (vector?.vector) await indexes.ensure(vector.modelId, vector.vector.length);
      const hash = contentHash(memory.content);
      const s = memory.scope;
      const { existing, stored } = await db.transaction(async (tx) => {
        // Racing creates of one content in one scope take turns here (released at commit); the second then sees the
        // first's row. The key is a 64-bit hash of scope and content hash: a collision only makes two creates wait.
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [`dedupe|${s.tenantId}|${s.mode}|${s.workspace}|${hash}`]);
        const found = await byContentHash(tx, s, hash);
        if (found) return { existing: found, stored: [] as StoredEvent[] };
        const row = await insertIn(tx, memory, vector);
        return { existing: undefined, stored: events ? await outbox.appendInTx(tx, events(toMemory(row))) : [] };
      });
      outbox.notify(stored);
      return existing ? toMemory(existing) : null;
    },

    async findByContent(scope, content) {
      const row = await byContentHash(db, scope, contentHash(content));
      return row ? toMemory(row) : null;
    },

    findById: (scope, id) => byColumn(scope, 'id', id),
    findByClientId: (scope, clientId) => byColumn(scope, 'client_id', clientId),

    async usage(scope, { since, top }) {
      const t = pgTime(since);
      const p1 = new SqlParams();
      const [totals] = await db.query<{ total: number; bytes: string | null; accesses: string | null; created: number; updated: number }>(
        `SELECT COUNT(*)::int AS total, SUM(octet_length(m.title) + octet_length(m.content))::text AS bytes,
           SUM(m.access_count)::text AS accesses,
           COUNT(*) FILTER (WHERE m.created_at >= ${p1.add(t)}::timestamptz)::int AS created,
           COUNT(*) FILTER (WHERE m.updated_at >= ${p1.add(t)}::timestamptz AND m.updated_at > m.created_at)::int AS updated
         FROM memories m WHERE ${scopeSql(p1, scope)}`, p1.values);
      const p2 = new SqlParams();
      const types = await db.query<{ memory_type: string; n: number }>(
        `SELECT m.memory_type, COUNT(*)::int AS n FROM memories m WHERE ${scopeSql(p2, scope)} GROUP BY m.memory_type`, p2.values);
      const p3 = new SqlParams();
      const most = await db.query<Row>(`SELECT ${M_COLUMNS} FROM memories m WHERE ${scopeSql(p3, scope)} AND m.access_count > 0
        ORDER BY m.access_count DESC, m.id LIMIT ${p3.add(top)}`, p3.values);
      const p4 = new SqlParams();
      const tags = await db.query<{ tag: string; n: number }>(`SELECT t.tag, COUNT(*)::int AS n
        FROM memories m, unnest(m.tags) AS t(tag) WHERE ${scopeSql(p4, scope)}
        GROUP BY t.tag ORDER BY n DESC, t.tag COLLATE "C" LIMIT ${p4.add(top)}`, p4.values);
      return {
        total: totals?.total ?? 0, byType: Object.fromEntries(types.map((r) => [r.memory_type, r.n])), bytes: Number(totals?.bytes ?? 0),
        totalAccesses: Number(totals?.accesses ?? 0), mostAccessed: most.map(toMemory), createdSince: totals?.created ?? 0,
        updatedSince: totals?.updated ?? 0, topTags: tags.map((r) => ({ tag: r.tag, count: r.n })),
      };
    },

    async countByTopic(scope, topicIds) {
      if (topicIds.length === 0) return new Map();
      const p = new SqlParams();
      const rows = await db.query<{ topic_id: string; n: number }>(`SELECT m.topic_id, COUNT(*)::int AS n FROM memories m
        WHERE ${scopeSql(p, scope)} AND m.topic_id = ANY(${p.add(topicIds)}::text[]) GROUP BY m.topic_id`, p.values);
      return new Map(rows.map((r) => [r.topic_id, r.n]));
    },

    async findIdsByPrefix(scope, prefix, limit) {
      // A range scan on the (scope, id) index (ids compare bytewise, COLLATE "C").
      const upper = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
      const p = new SqlParams();
      const rows = await db.query<{ id: string }>(`SELECT m.id FROM memories m WHERE ${scopeSql(p, scope)}
        AND m.id >= ${p.add(prefix)} AND m.id < ${p.add(upper)} ORDER BY m.id LIMIT ${p.add(limit)}`, p.values);
      return rows.map((r) => r.id);
    },

    async recordAccess(scope, id, at) {
      const row = await touchIn(db, scope, id, at);
      return row ? toMemory(row) : null;
    },

    async update(scope, id, patch, at, by, vector, events) {
      if (vector) await indexes.ensure(vector.modelId, vector.vector.length);
      const row = await withEvents((tx) => updateIn(tx, scope, id, patch, at, by, vector), events);
      return row ? toMemory(row) : null;
    },

    async delete(scope, id, deletion, events) {
      return (await withEvents((tx) => deleteIn(tx, scope, id, deletion), events)) !== undefined;
    },

    async history(scope, id, page) {
      const p = new SqlParams();
      const where = `v.tenant_id = ${p.add(scope.tenantId)} AND v.mode = ${p.add(scope.mode)} AND v.workspace = ${p.add(scope.workspace)}
        AND v.memory_id = ${p.add(id)}`;
      // The count and the page in one statement; a page past the end still has its row of the count.
      const rows = await db.query<Partial<MemoryVersionRow> & { total: number }>(`SELECT n.total, page.*
        FROM (SELECT COUNT(*)::int AS total FROM memory_versions v WHERE ${where}) n
        LEFT JOIN LATERAL (SELECT ${VERSION_COLUMNS} FROM memory_versions v WHERE ${where}
          ORDER BY v.version DESC LIMIT ${p.add(page.limit)} OFFSET ${p.add(page.offset)}) page ON TRUE
        ORDER BY page.version DESC`, p.values);
      const total = rows[0]?.total ?? 0;
      return { versions: rows.filter((r) => r.memory_id != null).map((r) => toMemoryVersion(r as MemoryVersionRow)), total };
    },

    async findSupersededBy(scope, id) {
      const p = new SqlParams();
      const rows = await db.query<Row>(`SELECT ${M_COLUMNS} FROM memories m WHERE ${scopeSql(p, scope)}
        AND m.superseded_by = ${p.add(id)} ORDER BY m.created_at, m.seq`, p.values);
      return rows.map(toMemory);
    },

    async tombstoneOf(scope, id) {
      const [row] = await db.query<MemoryTombstoneRow>(`SELECT memory_id, tenant_id, mode, workspace, deleted_at, deleted_by, reason
        FROM memory_tombstones WHERE memory_id = $1 AND tenant_id = $2 AND mode = $3 AND workspace = $4`,
      [id, scope.tenantId, scope.mode, scope.workspace]);
      return row ? toMemoryTombstone(row) : null;
    },

    async list(scope, query: ListQuery) {
      const dir = query.sortOrder === 'asc' ? 'ASC' : 'DESC';
      const { validAt, ...others } = query.filter;
      const whereOf = (p: SqlParams) => `FROM memories m WHERE ${scopeSql(p, scope)}${filterSql(p, others)}`;
      // The total as without validity (often an index-only count), less the memories not valid then (pg-memory-filter.ts).
      const c = new SqlParams();
      const where = whereOf(c);
      const [count] = await db.query<{ n: number }>(validAt
        ? `SELECT ((SELECT COUNT(*) ${where}) - (SELECT COUNT(*) ${where} AND m.seq = ANY(${excludedAtSql(c, scope, validAt)})))::int AS n`
        : `SELECT COUNT(*)::int AS n ${where}`, c.values);
      const p = new SqlParams();
      const rows = await db.query<Row>(`SELECT ${M_COLUMNS} ${whereOf(p)}${validAt ? ` AND ${validAtSql(p, validAt)}` : ''}
        ORDER BY ${SORT_COLUMNS[query.sortBy]} ${dir}, m.seq ${dir} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}`, p.values);
      return { items: rows.map(toMemory), total: count!.n };
    },

    async searchSimilar(scope, query) {
      const { hits, total } = await searchVectors(db, scope, {
        vector: query.vector, modelId: query.modelId, limit: query.limit, filter: query.filter,
        minCosine: query.minCosine - MIN_COSINE_SLACK, withVectors: query.withVectors,
      }, options);
      if (hits.length === 0) return { hits: [], total };
      const rows = await rowsBySeq(scope, hits.map((h) => h.seq));
      const out: SimilarityHit[] = hits.flatMap((h) => {
        const row = rows.get(h.seq);
        return row ? [{
          memory: toMemory(row), cosine: h.cosine,
          ...(query.withVectors ? { vector: h.vector } : {}),
        }] : [];
      });
      return { hits: out, total };
    },

    async searchKeyword(scope, query) {
      const { hits, total } = await keywordRanking(scope, query.terms, query.filter, query.limit,
        query.candidatesPerTerm ?? KEYWORD_CANDIDATES_PER_TERM);
      if (hits.length === 0) return { hits: [], total };
      const rows = await rowsBySeq(scope, hits.map((h) => h.seq));
      return { hits: toKeywordHits(hits, (seq) => { const row = rows.get(seq); return row && { memory: toMemory(row) }; }), total };
    },

    // Refs are the rows' seqs (a number): the keyword ranking has them already, and reads by primary key.
    async rankSimilar(scope, query) {
      const { hits, total } = await searchVectors(db, scope, {
        vector: query.vector, modelId: query.modelId, limit: query.limit, filter: query.filter,
        minCosine: query.minCosine - MIN_COSINE_SLACK, callerBusy: true,
      }, options);
      return { hits: hits.map((h) => ({ ref: h.seq, cosine: h.cosine })), total };
    },

    async rankKeyword(scope, query) {
      const { hits, total } = await keywordRanking(scope, query.terms, query.filter, query.limit,
        query.candidatesPerTerm ?? KEYWORD_CANDIDATES_PER_TERM);
      return { hits: toKeywordCandidates(hits), total };
    },

    cosinesOf: (scope, refs, query) => cosinesOf(db, scope, seqsOf(refs), query, Boolean(options.index)),

    // The exact cosines (error 0). With the node's vector index, a hybrid search's keyword candidates are scored from
    // the snapshot its semantic leg caught up and searched (PgVectorIndex.exactCosines: no vector read); else, or with
    // no such snapshot, in one query.
    async cosineEstimatesOf(scope, refs, query) {
      const seqs = seqsOf(refs);
      const exact = (seqs.length > 0 ? await options.index?.exactCosines(scope, query, seqs) : null)
        ?? await cosinesOf(db, scope, seqs, query, Boolean(options.index));
      return new Map([...exact].map(([ref, cosine]) => [ref, { cosine, error: 0 }]));
    },

    async findByRefs(scope, refs) {
      if (refs.length === 0) return new Map();
      const rows = await rowsBySeq(scope, seqsOf(refs));
      return new Map([...rows].map(([seq, row]) => [seq, toMemory(row)]));
    },

    async vectorsOf(scope, ids, modelId) {
      if (ids.length === 0) return new Map();
      const p = new SqlParams();
      const rows = await db.query<{ id: string; embedding: string }>(`SELECT m.id, v.embedding::text AS embedding
        FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq
        WHERE ${scopeSql(p, scope)} AND v.model_id = ${p.add(modelId)} AND m.id = ANY(${p.add(ids)}::text[])`, p.values);
      return new Map(rows.map((r) => [r.id, parseVector(r.embedding)]));
    },

    async suggestTags(scope, prefix, limit, validAt) {
      const p = new SqlParams();
      return db.query<{ text: string; frequency: number }>(`SELECT t.tag AS text, COUNT(DISTINCT m.seq)::int AS frequency
        FROM memories m, unnest(m.tags) AS t(tag)
        WHERE ${scopeSql(p, scope)} AND t.tag ILIKE ${p.add(`${likeLiteral(prefix)}%`)} ESCAPE '\\'${validAt ? ` AND ${validAtSql(p, validAt)}` : ''}
        GROUP BY t.tag ORDER BY frequency DESC, t.tag COLLATE "C" LIMIT ${p.add(limit)}`, p.values);
    },

    async suggestTitles(scope, text, limit, validAt) {
      const p = new SqlParams();
      const where = `WHERE ${scopeSql(p, scope)} AND m.title ILIKE ${p.add(`%${likeLiteral(text)}%`)} ESCAPE '\\'`;
      const prefix = `ILIKE ${p.add(`${likeLiteral(text)}%`)} ESCAPE '\\'`;
      if (!validAt) {
        return db.query<{ text: string; frequency: number }>(`SELECT m.title AS text, COUNT(*)::int AS frequency FROM memories m
          ${where} GROUP BY m.title ORDER BY (m.title ${prefix}) DESC, frequency DESC, m.title COLLATE "C" LIMIT ${p.add(limit)}`, p.values);
      }
      // Each title's count (an index-only scan of the scope's titles) less its memories not valid then (pg-memory-filter.ts).
      return db.query<{ text: string; frequency: number }>(`SELECT a.title AS text, (a.n - COALESCE(x.n, 0))::int AS frequency
        FROM (SELECT m.title, COUNT(*) AS n FROM memories m ${where} GROUP BY m.title) a
        LEFT JOIN (SELECT m.title, COUNT(*) AS n FROM memories m ${where} AND m.seq = ANY(${excludedAtSql(p, scope, validAt)})
          GROUP BY m.title) x
          ON x.title = a.title
        WHERE a.n > COALESCE(x.n, 0)
        ORDER BY (a.title ${prefix}) DESC, frequency DESC, a.title COLLATE "C" LIMIT ${p.add(limit)}`, p.values);
    },
  };
}
