import { AtomicStepFailed, MIN_COSINE_SLACK, type AtomicStep, type EventsFor, type MemoryRepository } from '../../../core/memories/memory.repository.ts';
import {
  KEYWORD_CANDIDATES_PER_TERM, type ListQuery, type Memory, type MemoryPatch, type SimilarityHit, type StoredVector,
} from '../../../core/memories/memory.types.ts';
import { DomainError } from '../../../core/errors.ts';
import type { StoredEvent } from '../../../core/events/event.types.ts';
import type { KeyMode, Scope } from '../../../core/scope.ts';
import { isPgUniqueViolation, pgInt, pgJson, pgTime, pgTimeOrNull, SqlParams, type PgExecutor, type PgQueryable } from './pg-executor.ts';
import { filterSql, scopeSql } from './pg-memory-filter.ts';
import { seqsOf } from '../memory-refs.ts';
import { rankKeywords } from './pg-keyword-ranking.ts';
import type { PgOutbox } from './pg-outbox.ts';
import { cosinesOf, parseVector, PgVectorIndexes, searchVectors, vectorText, type VectorSearchOptions } from './pg-vector-search.ts';
import { toKeywordCandidates, toKeywordHits } from '../bm25.ts';
import { createPgMemoryMaintenance } from './pg-memory-maintenance.ts';
import { contentHash } from '../../../core/memories/content-hash.ts';

interface Row {
  seq: number | string; id: string; client_id: string | null; tenant_id: string; mode: string; workspace: string;
  title: string; content: string; memory_type: string; tags: string[]; metadata: Record<string, unknown>;
  topic_id: string | null; created_at: Date; updated_at: Date; created_by: string; updated_by: string;
  access_count: number; last_accessed: Date | null;
}

/** Every column but the keyword index ones, which only the database reads. */
const COLUMNS = ['seq', 'id', 'client_id', 'tenant_id', 'mode', 'workspace', 'title', 'content', 'memory_type', 'tags',
  'metadata', 'topic_id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'access_count', 'last_accessed'];
const M_COLUMNS = COLUMNS.map((c) => `m.${c}`).join(', ');
const RETURNING = `RETURNING ${COLUMNS.join(', ')}`;

const toMemory = (r: Row): Memory => ({
  id: r.id,
  clientId: r.client_id,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  title: r.title,
  content: r.content,
  memoryType: r.memory_type,
  tags: r.tags,
  metadata: r.metadata,
  topicId: r.topic_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  createdBy: r.created_by,
  updatedBy: r.updated_by,
  accessCount: r.access_count,
  lastAccessed: r.last_accessed,
});

/** A client-id unique violation as the domain's CONFLICT; anything else unchanged. */
function asConflict(err: unknown, memory: Memory): unknown {
  if (!isPgUniqueViolation(err, 'memories_scope_client_id')) return err;
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

export function createPgMemoryRepository(db: PgExecutor, outbox: PgOutbox, options: VectorSearchOptions): MemoryRepository {
  const indexes = new PgVectorIndexes(db);

  async function upsertVector(tx: PgQueryable, seq: number, v: StoredVector): Promise<void> {
    // A write that (re-)embeds a memory replaces every vector it has: vectors of other models (a reindex's) were made
    // from the old text. mnemo reindex adds them back (MemoryMaintenance.putVectors).
    await tx.query('DELETE FROM memory_vectors WHERE memory_seq = $1 AND model_id <> $2', [seq, v.modelId]);
    await tx.query(`INSERT INTO memory_vectors (memory_seq, model_id, dims, embedding) VALUES ($1, $2, $3, $4::vector)
      ON CONFLICT (memory_seq, model_id) DO UPDATE SET dims = EXCLUDED.dims, embedding = EXCLUDED.embedding`,
    [seq, v.modelId, v.vector.length, vectorText(v.vector)]);
  }

  async function insertIn(tx: PgQueryable, m: Memory, v: StoredVector): Promise<Row> {
    let row: Row;
    try {
      [row] = (await tx.query<Row>(`INSERT INTO memories (id, client_id, tenant_id, mode, workspace, title, content,
        memory_type, tags, metadata, topic_id, created_at, updated_at, created_by, updated_by, access_count, last_accessed,
        content_hash)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) ${RETURNING}`,
      [m.id, m.clientId, m.scope.tenantId, m.scope.mode, m.scope.workspace, m.title, m.content, m.memoryType, m.tags,
        pgJson(m.metadata), m.topicId, pgTime(m.createdAt), pgTime(m.updatedAt), m.createdBy, m.updatedBy,
        m.accessCount, pgTimeOrNull(m.lastAccessed), contentHash(m.content)])) as [Row];
    } catch (err) {
      throw asConflict(err, m);
    }
    await upsertVector(tx, pgInt(row.seq), v);
    return row;
  }

  async function updateIn(tx: PgQueryable, scope: Scope, id: string, patch: MemoryPatch, at: Date, by: string,
    v: StoredVector | null): Promise<Row | undefined> {
    const p = new SqlParams();
    // updated_at always moves forward, even when the clock did not.
    const sets = [`updated_by = ${p.add(by)}`,
      `updated_at = GREATEST(${p.add(pgTime(at))}::timestamptz, m.updated_at + interval '1 millisecond')`];
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
    const [row] = await tx.query<Row>(
      `UPDATE memories AS m SET ${sets.join(', ')} WHERE ${scopeSql(p, scope)} AND m.id = ${p.add(id)} ${RETURNING}`, p.values);
    if (row && v) await upsertVector(tx, pgInt(row.seq), v);
    return row;
  }

  async function deleteIn(tx: PgQueryable, scope: Scope, id: string): Promise<Row | undefined> {
    const p = new SqlParams();
    const [row] = await tx.query<Row>(`DELETE FROM memories AS m WHERE ${scopeSql(p, scope)} AND m.id = ${p.add(id)} ${RETURNING}`, p.values);
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
        for (const [i, step] of steps.entries()) {
          let row: Row | undefined;
          switch (step.kind) {
            case 'insert':
              try {
                row = await insertIn(tx, step.memory, step.vector);
              } catch (err) {
                throw err instanceof DomainError ? new AtomicStepFailed(i, err) : err;
              }
              break;
            case 'update':
              row = await updateIn(tx, scope, step.id, step.patch, step.at, step.by, step.vector);
              break;
            case 'delete':
              row = await deleteIn(tx, scope, step.id);
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
      await withEvents((tx) => insertIn(tx, memory, vector), events);
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

    async delete(scope, id, events) {
      return (await withEvents((tx) => deleteIn(tx, scope, id), events)) !== undefined;
    },

    async list(scope, query: ListQuery) {
      const dir = query.sortOrder === 'asc' ? 'ASC' : 'DESC';
      const p = new SqlParams();
      const where = `FROM memories m WHERE ${scopeSql(p, scope)}${filterSql(p, query.filter)}`;
      const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n ${where}`, p.values);
      const rows = await db.query<Row>(`SELECT ${M_COLUMNS} ${where} ORDER BY ${SORT_COLUMNS[query.sortBy]} ${dir}, m.seq ${dir}
        LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}`, p.values);
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
      const { hits, total } = await rankKeywords(db, scope, query.terms, query.filter, query.limit,
        query.candidatesPerTerm ?? KEYWORD_CANDIDATES_PER_TERM);
      if (hits.length === 0) return { hits: [], total };
      const rows = await rowsBySeq(scope, hits.map((h) => h.seq));
      return { hits: toKeywordHits(hits, (seq) => { const row = rows.get(seq); return row && { memory: toMemory(row) }; }), total };
    },

    // Refs are the rows' seqs (a number): the keyword ranking has them already, and reads by primary key.
    async rankSimilar(scope, query) {
      const { hits, total } = await searchVectors(db, scope, {
        vector: query.vector, modelId: query.modelId, limit: query.limit, filter: query.filter,
        minCosine: query.minCosine - MIN_COSINE_SLACK,
      }, options);
      return { hits: hits.map((h) => ({ ref: h.seq, cosine: h.cosine })), total };
    },

    async rankKeyword(scope, query) {
      const { hits, total } = await rankKeywords(db, scope, query.terms, query.filter, query.limit,
        query.candidatesPerTerm ?? KEYWORD_CANDIDATES_PER_TERM);
      return { hits: toKeywordCandidates(hits), total };
    },

    cosinesOf: (scope, refs, query) => cosinesOf(db, scope, seqsOf(refs), query),

    // No index in memory to estimate from: the exact cosines, in one query.
    async cosineEstimatesOf(scope, refs, query) {
      const exact = await cosinesOf(db, scope, seqsOf(refs), query);
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

    async suggestTags(scope, prefix, limit) {
      const p = new SqlParams();
      return db.query<{ text: string; frequency: number }>(`SELECT t.tag AS text, COUNT(DISTINCT m.seq)::int AS frequency
        FROM memories m, unnest(m.tags) AS t(tag)
        WHERE ${scopeSql(p, scope)} AND t.tag ILIKE ${p.add(`${likeLiteral(prefix)}%`)} ESCAPE '\\'
        GROUP BY t.tag ORDER BY frequency DESC, t.tag COLLATE "C" LIMIT ${p.add(limit)}`, p.values);
    },

    async suggestTitles(scope, text, limit) {
      const p = new SqlParams();
      return db.query<{ text: string; frequency: number }>(`SELECT m.title AS text, COUNT(*)::int AS frequency FROM memories m
        WHERE ${scopeSql(p, scope)} AND m.title ILIKE ${p.add(`%${likeLiteral(text)}%`)} ESCAPE '\\'
        GROUP BY m.title ORDER BY (m.title ILIKE ${p.add(`${likeLiteral(text)}%`)} ESCAPE '\\') DESC, frequency DESC,
          m.title COLLATE "C" LIMIT ${p.add(limit)}`, p.values);
    },
  };
}
