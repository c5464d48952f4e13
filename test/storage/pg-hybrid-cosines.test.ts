import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteExecutor, type PgExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { MemoryRef } from '../../src/core/memories/memory.types.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { axisVector, makeMemory, scopeA } from '../support/fixtures.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';

/*
 * A hybrid search's keyword-only candidates on a node with the in-memory vector index: cosineEstimatesOf scores them
 * from the snapshot the search's own semantic leg (rankSimilar, same query vector) caught up — exact, no vector read
 * from the database — and so sees another node's re-embedding committed just before the search. Without such a
 * snapshot (another query vector) the vectors are read from the database, with the same answer.
 */
let database: FileDatabase | undefined;
/** The other node: it writes; its own searches run in SQL. */
let writer: Storage;
/** This node: the in-memory vector index, on an executor that records the statements it sends. */
let reader: Storage;
const sent: string[] = [];
const DIMS = 8;
const MODEL = 'm';
const ids: string[] = [];

beforeAll(async () => {
  database = await fileDatabase();
  const db: PgExecutor = { ...pgliteExecutor(database.pglite), close: async () => undefined };
  writer = await createPostgresStorage(db, { vectorScan: 'database' });
  const recording: PgExecutor = { ...db, query: (sql, params) => { sent.push(sql); return db.query(sql, params); } };
  reader = await createPostgresStorage(recording);
  const memories = Array.from({ length: 12 }, (_, i) => makeMemory(scopeA, { title: `note ${i}`, content: 'deploy on friday' }));
  await writer.memories.applyAtomically(scopeA, memories.map((memory, i) => ({
    kind: 'insert' as const, memory, vector: { modelId: MODEL, vector: axisVector(DIMS, i % DIMS, (i + 1) % DIMS, 0.1 * i) },
  })));
  ids.push(...memories.map((m) => m.id));
}, 60_000);
afterAll(async () => {
  await reader?.close();
  await writer?.close();
  await database?.release();
});

/** The seq refs of the scope's memories by id, from a keyword ranking (every memory holds "deploy"). */
async function refsById(): Promise<Map<string, MemoryRef>> {
  const ranked = await reader.memories.rankKeyword(scopeA, { terms: ['deploy'], limit: 100, filter: {} });
  const rows = await reader.memories.findByRefs(scopeA, ranked.hits.map((h) => h.ref));
  return new Map([...rows].map(([ref, m]) => [m.id, ref]));
}

describe('PostgreSQL hybrid search: keyword-only candidates\' cosines from the in-memory index', () => {
  it('uses the snapshot its own semantic leg caught up: another node\'s re-embedding just before, no vector read', async () => {
    const refs = await refsById();
    const query = { vector: axisVector(DIMS, 0, 1, 0.5), modelId: MODEL };
    const similar = (vector: Float32Array) => reader.memories.rankSimilar(scopeA, { vector, modelId: MODEL, limit: 1, minCosine: -1, filter: {} });
    // Loads this node's index; the memory picked is no hit of a one-hit semantic leg: keyword-only.
    const first = await similar(axisVector(DIMS, 0, 1, 0.5));
    const id = ids.find((i) => refs.get(i) !== first.hits[0]!.ref)!;
    const candidate = refs.get(id)!;
    const before = (await reader.memories.cosinesOf(scopeA, [candidate], query)).get(candidate)!;

    // Another node re-embeds the candidate, then this node's hybrid search runs: its semantic leg, and the scoring of
    // the keyword candidates beside it (as hybrid's early scoring does, before the leg's catch-up has answered).
    await writer.memories.update(scopeA, id, {}, new Date(), 'u', { modelId: MODEL, vector: axisVector(DIMS, 1, 0, -0.25) });
    sent.length = 0;
    const semanticLeg = similar(query.vector);
    const estimates = await reader.memories.cosineEstimatesOf(scopeA, [candidate, ...ids.map((i) => refs.get(i)!)], query);
    const semantic = await semanticLeg;
    expect(semantic.hits.map((h) => h.ref)).not.toContain(candidate);
    // One statement in all: the semantic leg's catch-up.
    expect(sent).toHaveLength(1);

    // Exactly the cosine the database's current vector gives (read afresh, scored as the scan scores), not the old one.
    const current = await reader.memories.cosinesOf(scopeA, [candidate], { vector: Float32Array.from(query.vector), modelId: MODEL });
    expect(sent.some((sql) => sql.includes('vector_send'))).toBe(true);
    expect(estimates.get(candidate)).toEqual({ cosine: current.get(candidate), error: 0 });
    expect(current.get(candidate)).not.toBe(before);
    expect(estimates.get(semantic.hits[0]!.ref)).toEqual({ cosine: semantic.hits[0]!.cosine, error: 0 });
  });

  it('reads from the database without a snapshot of that query vector, or of its model, scope and width', async () => {
    const refs = [...(await refsById()).values()];
    const vector = axisVector(DIMS, 2, 3, 0.5);
    await reader.memories.rankSimilar(scopeA, { vector, modelId: MODEL, limit: 1, minCosine: -1, filter: {} });
    const fromSnapshot = await reader.memories.cosineEstimatesOf(scopeA, refs, { vector, modelId: MODEL });
    expect(fromSnapshot.size).toBe(refs.length);
    for (const query of [{ vector: Float32Array.from(vector), modelId: MODEL }, { vector, modelId: 'other' }]) {
      sent.length = 0;
      const read = await reader.memories.cosineEstimatesOf(scopeA, refs, query);
      expect(sent.some((sql) => sql.includes('vector_send'))).toBe(true);
      expect(read).toEqual(query.modelId === MODEL ? fromSnapshot : new Map());
    }
    // Another scope with the same vector: nothing of scope A's.
    expect((await reader.memories.cosineEstimatesOf({ ...scopeA, workspace: 'other' }, refs, { vector, modelId: MODEL })).size).toBe(0);
  });
});

