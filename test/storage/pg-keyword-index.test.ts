import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteExecutor, type PgExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { loadInPages } from '../../src/adapters/storage/postgres/pg-index-catch-up.ts';
import { PgKeywordIndex } from '../../src/adapters/storage/postgres/pg-keyword-index.ts';
import { rankKeywords } from '../../src/adapters/storage/postgres/pg-keyword-ranking.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { MemoryFilter } from '../../src/core/memories/memory.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { axisVector, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { seededRandom } from '../support/seeded-random.ts';

/*
 * The in-memory keyword index (pg-keyword-index.ts) against the SQL ranking it replaces (pg-keyword-ranking.ts), on
 * one varied corpus: the same hits, scores (exactly), order and totals for words, phrases, stop words, weights,
 * validity, filters and a candidate cap exceeded; and after another node's inserts, edits and deletes, at once.
 */
let database: FileDatabase | undefined;
let db: PgExecutor;
/** The other node: it writes; its own searches run in SQL. */
let writer: Storage;
let index: PgKeywordIndex;

const VOCABULARY = ['deploy', 'quick', 'release', 'friday', 'database', 'backup', 'restore', 'vector', 'search', 'keyword',
  'index', 'memory', 'node', 'cluster', 'replica', 'shard', 'latency', 'budget', 'review', 'team', 'the', 'and', 'of'];
const TAGS = ['ops', 'dev', 'deploy', 'urgent'];
const vec = { modelId: 'm', vector: axisVector(4, 0) };
const now = new Date();
const day = 86_400_000;

function text(random: () => number, words: number): string {
  return Array.from({ length: words }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!).join(' ');
}

/** A memory of `scope` from the seeded vocabulary; some ended, some not yet begun (validity), varied types and tags. */
function randomMemory(random: () => number, scope: Scope) {
  const validity = random();
  return makeMemory(scope, {
    title: text(random, 1 + Math.floor(random() * 4)),
    content: text(random, 3 + Math.floor(random() * 30)),
    tags: TAGS.filter(() => random() < 0.3),
    memoryType: random() < 0.5 ? 'context' : 'decision',
    ...(validity < 0.1 ? { validUntil: new Date(now.getTime() - day) } : {}),
    ...(validity > 0.92 ? { validFrom: new Date(now.getTime() + day) } : {}),
  });
}

const QUERIES: string[][] = [
  ['deploy'], ['quick', 'deploy'], ['quick deploy'], ['the quick deploy'], ['the'], ['the', 'and'], ['unheard'],
  ['database backup', 'restore'], ['release friday', 'team'], ['deploying'], ['vector-search', 'index'],
  ['memory', 'node', 'cluster', 'replica', 'shard'], ['urgent'], ['budget review team'], ["o'neil", 'back\\slash'],
];
const FILTERS: MemoryFilter[] = [
  {}, { validAt: now }, { tagsAny: ['ops', 'urgent'] }, { types: ['decision'] }, { validAt: now, tagsAll: ['dev'] },
  { createdFrom: new Date(0) },
];
/** [candidate cap, limit]: the default cap, and caps that most words exceed. */
const CAPS = [[1000, 10], [4, 3], [1, 50]] as const;

/** Every query, filter and cap through both rankings; the answers must be identical. */
async function expectSameAsSql(scope: Scope): Promise<number> {
  let compared = 0;
  for (const [i, words] of QUERIES.entries()) {
    // Each query under two of the filters and caps, in rotation (every pair would take too long on PGlite).
    for (const k of [i, i + 3]) {
      const filter = FILTERS[k % FILTERS.length]!;
      const [cap, limit] = CAPS[k % CAPS.length]!;
      const sql = await rankKeywords(db, scope, words, filter, limit, cap);
      const memory = await index.rank(scope, words, filter, limit, cap);
      expect(memory, `${JSON.stringify(words)} ${JSON.stringify(filter)} cap ${cap}`).toEqual(sql);
      if (sql.hits.length > 0) compared++;
    }
  }
  return compared;
}

beforeAll(async () => {
  database = await fileDatabase();
  db = { ...pgliteExecutor(database.pglite), close: async () => undefined };
  writer = await createPostgresStorage(db, { vectorScan: 'database' });
  index = new PgKeywordIndex(db);
  const random = seededRandom(39);
  for (const scope of [scopeA, scopeB]) {
    await writer.memories.applyAtomically(scope, Array.from({ length: scope === scopeA ? 160 : 40 }, () => ({
      kind: 'insert' as const, memory: randomMemory(random, scope), vector: vec,
    })));
  }
  await writer.memories.insert(makeMemory(scopeA, { title: "O'Neil", content: 'a back\\slash and a quote', tags: ['ops'] }), vec);
}, 60_000);
afterAll(async () => {
  index?.close();
  await writer?.close();
  await database?.release();
});

describe('PostgreSQL in-memory keyword index', () => {
  it('ranks exactly as the SQL ranking: words, phrases, stop words, weights, validity, filters, the cap exceeded', async () => {
    expect(await expectSameAsSql(scopeA)).toBeGreaterThan(15);
    expect(await expectSameAsSql(scopeB)).toBeGreaterThan(10);
  });

  it('loads a workspace in pages by seq: every row once, in order, and the version read with the first page', async () => {
    const [{ n, version }] = await db.query<{ n: number; version: number }>(`SELECT (SELECT COUNT(*)::int FROM memories
      WHERE tenant_id = $1 AND mode = $2 AND workspace = $3) AS n, (SELECT version::int FROM vector_versions
      WHERE tenant_id = $1 AND mode = $2 AND workspace = $3) AS version`, [scopeA.tenantId, scopeA.mode, scopeA.workspace]) as [{ n: number; version: number }];
    const statements: string[] = [];
    const counting: PgExecutor = { ...db, query: (sql, params) => { statements.push(sql); return db.query(sql, params); } };
    const seen: number[] = [];
    const loaded = await loadInPages<{ kind: number; seq: string }>(counting, scopeA, '', (p, after, limit) => `SELECT 1, m.seq FROM memories m
      WHERE m.tenant_id = ${p.add(scopeA.tenantId)} AND m.mode = ${p.add(scopeA.mode)} AND m.workspace = ${p.add(scopeA.workspace)}
        AND m.seq > ${p.add(after)} ORDER BY m.seq LIMIT ${limit}`, (row) => seen.push(Number(row.seq)), 7);
    expect(loaded).toBe(version);
    expect(seen).toHaveLength(n);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(n);
    expect(statements).toHaveLength(Math.floor(n / 7) + 1);
  });

  it('sees another node\'s inserts, edits (text, tags alone, no vector) and deletes on its next search', async () => {
    const reader = await createPostgresStorage(db);
    const search = async (storage: Storage, word: string) =>
      (await storage.memories.searchKeyword(scopeA, { terms: [word], limit: 100, filter: {} })).hits.map((h) => h.memory.id);
    const holding = await search(reader, 'deploy');
    const [edited, deleted, untouched] = holding;
    const retagged = (await search(reader, 'shard')).find((id) => !holding.includes(id))!;
    const random = seededRandom(7);
    await writer.memories.update(scopeA, edited!, { content: 'nothing left of the old words here', title: 'Gone', tags: [] }, new Date(), 'u', null);
    await writer.memories.update(scopeA, retagged, { tags: ['deploy'] }, new Date(), 'u', null);
    await writer.memories.delete(scopeA, deleted!, { at: new Date(), by: 'u', reason: 'test' });
    await writer.memories.recordAccess(scopeA, untouched!, new Date());
    const added = randomMemory(random, scopeA);
    await writer.memories.applyAtomically(scopeA, [added, { ...randomMemory(random, scopeA), title: 'deploy' }].map((memory) => ({
      kind: 'insert' as const, memory, vector: vec,
    })));

    const after = await search(reader, 'deploy');
    expect(after).toEqual(await search(writer, 'deploy'));
    expect(after).not.toContain(edited);
    expect(after).not.toContain(deleted);
    expect(after).toContain(untouched);
    expect(after).toContain(retagged);
    expect(await search(reader, 'gone')).toEqual([edited]);
    expect(await expectSameAsSql(scopeA)).toBeGreaterThan(15);
    await reader.close();
  });
});
