import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { MAX_CHANGES_APPLIED, SqliteFilterCache } from '../../src/adapters/storage/sqlite/sqlite-filter-cache.ts';
import { KeyBitmap } from '../../src/adapters/storage/sqlite/vector-scan/allowed-keys.ts';
import { INSERT_MEMORY_SQL, memoryParams } from '../../src/adapters/storage/sqlite/sqlite-memory-row.ts';
import { migrateSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { MIGRATIONS } from '../../src/adapters/storage/sqlite/migrations.ts';
import type { Memory, MemoryFilter, Metadata } from '../../src/core/memories/memory.types.ts';
import { makeMemory, scopeA, scopeB } from '../support/fixtures.ts';

/**
 * A filtered similarity search on SQLite reads a filter's seqs from the tag and metadata indexes, from a join one of
 * them drives, or from a walk of the scope, or combines them from its conditions' bitmaps read ahead (a big
 * workspace's broad tags, types and metadata values: sqlite-broad-conditions.ts), and keeps what a filter kept (and its
 * scan mask), brought forward over later writes by re-checking the memories they changed (sqlite-memory.repository.ts,
 * allowedSeqs and similarSeqs; sqlite-filter-cache.ts; the change log of migration 23). Whichever way, the answer
 * must be a filter-then-scan's: checked against the plainest exact one, computed here from the stored vectors, at
 * thresholds few rows, many rows and every row reach, searched once and again, and after writes of this connection and
 * another; the metadata index's matches against the JSON functions' (list's filter). `storage` reads broad conditions
 * ahead (every workspace counts as big here), `second` never does.
 */
const dims = 32;
const size = 1500;
const dir = mkdtempSync(join(tmpdir(), 'mnemo-filtered-search-'));
const file = join(dir, 'mnemo.db');
const storage = createSqliteStorage({ file, synchronous: 'normal', searchThreads: 0, prefetchFiltersFrom: 1 });
let seed = 7;
const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 * 2 - 1; };
// Distinct random vectors (no ties between cosines, so "the top 10" is one list).
const randomVector = () => Float32Array.from({ length: dims }, next);
const vectors = Array.from({ length: size }, randomVector);
const queries = Array.from({ length: 2 }, randomVector);
const now = new Date();
const memories: Memory[] = Array.from({ length: size }, (_, i) => makeMemory(scopeA, {
  memoryType: i % 3 === 0 ? 'fact' : 'note',
  tags: [...(i % 2 === 0 ? ['even'] : []), ...(i % 3 === 0 ? ['third'] : [])],
  metadata: { project: i % 50 === 0 ? 'rare' : 'common', source: { kind: i % 4 === 0 ? 'web' : 'file' }, flag: i % 5 === 0 },
  topicId: i % 10 === 0 ? 'topic-1' : null,
  // One in seven has ended (left out by validAt).
  ...(i % 7 === 0 ? { validUntil: new Date(now.getTime() - 1) } : {}),
}));
const second = createSqliteStorage({ file, synchronous: 'normal', searchThreads: 0 });
afterAll(async () => {
  await storage.close();
  await second.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeAll(async () => {
  await storage.memories.applyAtomically(scopeA, memories.map((memory, i) => ({
    kind: 'insert' as const, memory, vector: { modelId: 'm', vector: vectors[i]! },
  })));
  await storage.warmUp();
});

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0; let na = 0; let nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! * a[i]!; nb += b[i]! * b[i]!; }
  return dot / Math.sqrt(na * nb);
};

/** The filter-then-scan answer: every memory the filter keeps, scored exactly, best first. */
function expected(query: Float32Array, keep: (m: Memory) => boolean, minCosine: number, limit: number) {
  const scored = memories.map((m, i) => ({ id: m.id, c: cosine(query, vectors[i]!) })).filter((x, i) => keep(memories[i]!) && x.c >= minCosine);
  scored.sort((a, b) => b.c - a.c);
  return { ids: scored.slice(0, limit).map((x) => x.id), total: scored.length };
}

/** A threshold halfway between the n-th and n+1-th best cosine of the whole scope (so that about n rows reach it). */
function thresholdFor(query: Float32Array, n: number): number {
  const all = vectors.map((v) => cosine(query, v)).sort((a, b) => b - a);
  return (all[n - 1]! + all[n]!) / 2;
}

const valid = (m: Memory) => m.validUntil === null || m.validUntil > now;
const from = memories[500]!.createdAt;
const to = memories[900]!.createdAt;
const cases: [string, MemoryFilter, (m: Memory) => boolean][] = [
  ['tag, 50 %', { tagsAny: ['even'] }, (m) => m.tags.includes('even')],
  ['tags, all', { tagsAll: ['even', 'third'] }, (m) => m.tags.includes('even') && m.tags.includes('third')],
  ['metadata, 2 %', { metadata: { project: 'rare' } }, (m) => m.metadata.project === 'rare'],
  ['metadata, 98 %', { metadata: { project: 'common' } }, (m) => m.metadata.project === 'common'],
  ['metadata, any of', { metadata: { project: ['rare', 'absent'] } }, (m) => m.metadata.project === 'rare'],
  ['metadata, nested key and boolean', { metadata: { 'source.kind': 'web', flag: true } },
    (m) => (m.metadata.source as Metadata).kind === 'web' && m.metadata.flag === true],
  ['metadata and type', { metadata: { project: 'common' }, types: ['fact'] }, (m) => m.metadata.project === 'common' && m.memoryType === 'fact'],
  ['metadata and tag', { metadata: { project: 'rare' }, tagsAny: ['even'] }, (m) => m.metadata.project === 'rare' && m.tags.includes('even')],
  ['type', { types: ['fact'] }, (m) => m.memoryType === 'fact'],
  ['type and tag', { types: ['fact'], tagsAny: ['even'] }, (m) => m.memoryType === 'fact' && m.tags.includes('even')],
  ['topic', { topicId: 'topic-1' }, (m) => m.topicId === 'topic-1'],
  ['dates', { createdFrom: from, createdTo: to }, (m) => m.createdAt >= from && m.createdAt <= to],
  ['validity', { validAt: now }, valid],
  ['validity and metadata', { validAt: now, metadata: { project: 'common' } }, (m) => valid(m) && m.metadata.project === 'common'],
];

/** Every case, for the first `queryCount` queries, at thresholds about `reaching` rows reach (all: G1's threshold 0). */
async function expectFilterThenScan(search: typeof storage, queryCount: number, reaching: number[]) {
  for (const [name, filter, keep] of cases) {
    for (const [q, query] of queries.slice(0, queryCount).entries()) {
      for (const n of reaching) {
        const minCosine = n >= vectors.length ? -1 : thresholdFor(query, n);
        const want = expected(query, keep, minCosine, 10);
        const got = await search.memories.searchSimilar(scopeA, { vector: query, modelId: 'm', limit: 10, minCosine, filter });
        expect({ name, q, n, ids: got.hits.map((h) => h.memory.id), total: got.total }).toEqual({ name, q, n, ...want });
      }
    }
  }
}

describe('filtered similarity search on SQLite', () => {
  // A case's first search reads its filter's seqs; the next ones find them cached.
  it('gives a filter-then-scan\'s hits and total, searched once and again (cached)', async () => {
    await expectFilterThenScan(storage, 2, [40, 1200, size]);
    // On a connection that reads no condition ahead and has cached no filter: each case's first search lists its seqs.
    await expectFilterThenScan(second, 1, [40, 1200, size]);
  });

  it('follows writes that change what a filter keeps, from this connection and another', async () => {
    const update = async (through: typeof storage, i: number, patch: Partial<Memory>) => {
      memories[i] = (await through.memories.update(scopeA, memories[i]!.id, patch, new Date(), 'user-1', null))!;
    };
    // This connection: metadata, tags, type, topic changed; a memory added (a new row of the scan's matrix).
    await update(storage, 1, { metadata: { project: 'rare', source: { kind: 'web' }, flag: true } });
    await update(storage, 3, { tags: ['even', 'third'], memoryType: 'fact', topicId: 'topic-1' });
    const added = makeMemory(scopeA, { memoryType: 'fact', tags: ['even'], metadata: { project: 'rare', source: { kind: 'web' }, flag: true } });
    const addedVector = randomVector();
    await storage.memories.insert(added, { modelId: 'm', vector: addedVector });
    memories.push(added);
    vectors.push(addedVector);
    await expectFilterThenScan(storage, 1, [1200, memories.length]);
    // Another connection: the same kinds of change, and a deletion (its rows move in the scan's matrix).
    await update(second, 5, { metadata: { project: 'rare', source: { kind: 'file' }, flag: false } });
    await update(second, 6, { tags: [], memoryType: 'fact' });
    await second.memories.delete(scopeA, memories[0]!.id, { at: new Date(), by: 'user-1', reason: 'test' });
    memories.splice(0, 1);
    vectors.splice(0, 1);
    await expectFilterThenScan(storage, 1, [memories.length]);
    // A deletion here moves the last row of the matrix into the hole; then another connection's title change (no
    // change to what a filter keeps) reloads the matrix in store order: the cached filters' masks must follow.
    await storage.memories.delete(scopeA, memories[10]!.id, { at: new Date(), by: 'user-1', reason: 'test' });
    memories.splice(10, 1);
    vectors.splice(10, 1);
    await expectFilterThenScan(storage, 1, [memories.length]);
    await update(second, 20, { title: 'Another title' });
    await expectFilterThenScan(storage, 1, [memories.length]);
  });

  it('stays a filter-then-scan with writes of every kind between searches, from this connection and another (cached results brought forward)', async () => {
    const update = async (through: typeof storage, i: number, patch: Partial<Memory>) => {
      memories[i] = (await through.memories.update(scopeA, memories[i]!.id, patch, new Date(), 'user-1', null))!;
    };
    const insert = async (through: typeof storage, overrides: Partial<Memory>) => {
      const memory = makeMemory(scopeA, overrides);
      const vector = randomVector();
      await through.memories.insert(memory, { modelId: 'm', vector });
      memories.push(memory);
      vectors.push(vector);
    };
    const remove = async (through: typeof storage, i: number) => {
      await through.memories.delete(scopeA, memories[i]!.id, { at: new Date(), by: 'user-1', reason: 'test' });
      memories.splice(i, 1);
      vectors.splice(i, 1);
    };
    const rare = { project: 'rare', source: { kind: 'web' }, flag: true };
    const writes: (() => Promise<void>)[] = [
      () => insert(storage, { memoryType: 'fact', tags: ['even', 'third'], metadata: rare, topicId: 'topic-1' }),
      () => update(second, 40, { tags: ['even', 'third'] }),
      () => update(storage, 41, { metadata: rare }),
      () => update(second, 42, { memoryType: 'fact', metadata: { project: 'common', source: { kind: 'web' }, flag: true } }),
      () => update(storage, 43, { topicId: 'topic-1', tags: [] }),
      () => update(second, 44, { validUntil: new Date(now.getTime() - 1) }),
      () => remove(storage, 45),
      () => insert(second, { memoryType: 'fact', tags: ['even'], metadata: rare }),
      () => remove(second, 46),
      async () => {
        // Two writes to one memory, then one that undoes a filter's match, before the next search.
        await update(storage, 47, { tags: ['third'], metadata: rare });
        await update(second, 47, { tags: ['even'], metadata: { project: 'common', source: { kind: 'file' }, flag: false } });
      },
    ];
    // Filters this connection has not searched yet (a condition repeated i times: the same meaning, a new cache key),
    // made of conditions it read ahead: combined from those conditions' bitmaps, brought forward over the writes.
    const fresh = (i: number): [MemoryFilter, (m: Memory) => boolean][] => [
      [{ tagsAny: new Array<string>(i + 1).fill('even'), metadata: { project: 'common' } },
        (m) => m.tags.includes('even') && m.metadata.project === 'common'],
      [{ types: new Array<string>(i + 1).fill('fact'), tagsAll: ['even', 'third'] },
        (m) => m.memoryType === 'fact' && m.tags.includes('even') && m.tags.includes('third')],
    ];
    // Every row counts at threshold -1: any seq a result wrongly keeps or drops changes the total.
    for (const [i, write] of writes.entries()) {
      await write();
      await expectFilterThenScan(storage, 1, [memories.length]);
      for (const [filter, keep] of fresh(i)) {
        const got = await storage.memories.searchSimilar(scopeA, { vector: queries[0]!, modelId: 'm', limit: 10, minCosine: -1, filter });
        expect({ i, filter, ids: got.hits.map((h) => h.memory.id), total: got.total }).toEqual({ i, filter, ...expected(queries[0]!, keep, -1, 10) });
      }
    }
  });

  it('matches metadata as the JSON functions do (list\'s filter): nested keys, arrays, objects, types, quoting', async () => {
    const docs: Metadata[] = [
      { project: 'common' }, { project: ['rare', 'x'] }, { project: 'rare' }, { 'a-b': 'dash' }, { A_9: 1 }, { a9: 2.0 },
      { n: 1 }, { n: 1.5 }, { n: '1' }, { flag: true }, { flag: false }, { flag: 1 }, { source: { kind: 'web', deep: { x: 'y' } } },
      { source: { kind: ['web', 'file'] } }, { source: 'web' }, { 'source.kind': 'web' }, { list: [[1], { k: 'v' }, 'v'] },
      { obj: { k: 'v', j: 'w' } }, {}, { project: null }, { nested: { a: { b: { c: { d: 'deep' } } } } },
    ];
    const small = docs.map((metadata, i) => makeMemory(scopeB, { metadata, tags: i % 2 === 0 ? ['b-even'] : [] }));
    await storage.memories.applyAtomically(scopeB, small.map((memory) => ({
      kind: 'insert' as const, memory, vector: { modelId: 'm', vector: randomVector() },
    })));
    // One row whose metadata SQLite cannot read (nested deeper than 1000 levels), written as an older Mnemo could.
    const raw = new Database(file);
    raw.prepare('UPDATE memories SET metadata = ? WHERE id = ?').run(`{"project":${'['.repeat(1100)}${']'.repeat(1100)}}`, small[1]!.id);
    raw.close();
    const filters: Record<string, MemoryFilter['metadata']> = {
      common: { project: 'common' }, rare: { project: 'rare' }, either: { project: ['rare', 'common'] }, dash: { 'a-b': 'dash' },
      upper: { A_9: 1 }, digits: { a9: 2 }, one: { n: 1 }, text: { n: '1' }, yes: { flag: true }, no: { flag: false }, flagOne: { flag: 1 },
      nested: { 'source.kind': 'web' }, member: { source: 'web' }, objectMember: { obj: 'v' }, listElement: { list: 'v' },
      deep: { 'nested.a.b.c.d': 'deep' }, none: { project: [] }, two: { project: 'common', n: 1 },
    };
    for (const [name, metadata] of Object.entries(filters)) {
      // scopeA holds ~1,500 rows of project "common": its index rows exceed what scopeB's search reads from the index,
      // so these also take the scope walk (index probes) and the join driven by a tag.
      for (const filter of [{ metadata }, { metadata, tagsAny: ['b-even'] }]) {
        const listed = await storage.memories.list(scopeB, { filter, limit: 100, offset: 0, sortBy: 'created_at', sortOrder: 'asc' });
        const found = await storage.memories.searchSimilar(scopeB, { vector: randomVector(), modelId: 'm', limit: 100, minCosine: -1, filter });
        expect({ name, filter, total: found.total, ids: found.hits.map((h) => h.memory.id).sort() })
          .toEqual({ name, filter, total: listed.total, ids: listed.items.map((m) => m.id).sort() });
      }
    }
  });

  it('keeps filters\' results within its byte budget, least recently used out, while the filter version stands', () => {
    const db = new Database(file);
    try {
      // 100 bytes: a result of seqs 1 and 2 over a 10-row matrix takes 14 (a 4-byte bitmap, 1 a row); one whose seqs
      // span 1,000 (a 128-byte bitmap) is not kept.
      const cache = new SqliteFilterCache(db, () => [], 100);
      const filterOf = (i: number): MemoryFilter => ({ topicId: `t${i}` });
      const kept = (i: number) => cache.lookup(scopeB, filterOf(i)).allowed !== null;
      for (let i = 0; i < 7; i++) cache.lookup(scopeB, filterOf(i)).fill([1, 2], 10);
      expect([0, 1, 2, 3, 4, 5, 6].every(kept)).toBe(true);
      expect(kept(0)).toBe(true);
      // Filter 0 used last: the eighth result pushes out filter 1, the least recently used.
      cache.lookup(scopeB, filterOf(7)).fill([1, 2], 10);
      expect([kept(0), kept(1), kept(2), kept(7)]).toEqual([true, false, true, true]);
      cache.lookup(scopeB, filterOf(8)).fill([0, 1000], 10);
      expect(kept(8)).toBe(false);
      // Equal filters share a result whatever their validAt; another workspace's write leaves it standing, a version
      // moved here without its change logged (as before migration 23) not.
      const shared = cache.lookup(scopeB, filterOf(0)).allowed;
      expect(shared).not.toBeNull();
      expect(cache.lookup(scopeB, { ...filterOf(0), validAt: new Date() }).allowed).toBe(shared);
      const bump = db.prepare('INSERT INTO workspace_filter_versions VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET version = version + 1');
      bump.run(scopeA.tenantId, scopeA.mode, scopeA.workspace);
      expect(kept(0)).toBe(true);
      bump.run(scopeB.tenantId, scopeB.mode, scopeB.workspace);
      expect([kept(0), kept(2), kept(7)]).toEqual([false, false, false]);
    } finally {
      db.close();
    }
  });

  it('brings a cached result forward by re-checking the memories written since, up to its limit; further behind, reads it again', () => {
    const db = new Database(file);
    const scope = { ...scopeB, workspace: 'brought-forward' };
    try {
      const rechecked: number[][] = [];
      const cache = new SqliteFilterCache(db, (_scope, _filter, seqs) => { rechecked.push([...seqs]); return seqs.filter((s) => s % 2 === 0); });
      // A result of 40,000 seqs is brought over 2,048 versions at most, one of 2 over 64.
      const big: MemoryFilter = { tagsAny: ['big'] };
      const small: MemoryFilter = { tagsAny: ['small'] };
      const first = cache.lookup(scope, big).fill(Array.from({ length: 40_000 }, (_, i) => i + 1), 10);
      cache.lookup(scope, small).fill([1, 3], 10);
      const tag = db.prepare<[string, number]>('UPDATE memories SET tags = ? WHERE seq = ?');
      const insert = db.prepare(INSERT_MEMORY_SQL);
      const [seqA, seqB] = [0, 1].map(() => Number(insert.run(memoryParams(makeMemory(scope), 'hash')).lastInsertRowid)) as [number, number];
      // Two writes to one memory and one to another (any connection's: the triggers log them): each rechecked once.
      tag.run('["x"]', seqA);
      tag.run('["y"]', seqA);
      tag.run('["z"]', seqB);
      const brought = cache.lookup(scope, big).allowed;
      expect(rechecked).toEqual([[seqA, seqB]]);
      expect(brought).not.toBe(first);
      const bitmap = brought!.keys as KeyBitmap;
      expect([1, 3, 40_000, seqA, seqB].map((s) => bitmap.has(s))).toEqual([true, true, true, seqA % 2 === 0, seqB % 2 === 0]);
      expect(cache.lookup(scope, small).allowed).not.toBeNull();
      // Standing again: no recheck.
      expect(cache.lookup(scope, big).allowed).toBe(brought);
      expect(rechecked).toHaveLength(2);
      const topic = db.prepare<[string, number]>('UPDATE memories SET topic_id = ? WHERE seq = ?');
      const writes = (n: number) => db.transaction(() => {
        for (let i = 0; i < n; i++) topic.run(`t${i}`, seqA);
      })();
      writes(65);
      expect([cache.lookup(scope, big).allowed, cache.lookup(scope, small).allowed].map((a) => a !== null)).toEqual([true, false]);
      writes(MAX_CHANGES_APPLIED + 1);
      expect(cache.lookup(scope, big).allowed).toBeNull();
      // Every 1,024th version drops those 2,048 older: 2,048 versions kept at least, 3,072 at most, none missing.
      // (An update moves its workspace's version twice: once for the row's old workspace, once for its new.)
      writes(1024);
      const log = db.prepare<[string, string, string], { n: number; oldest: number; newest: number }>(
        `SELECT COUNT(*) AS n, MIN(version) AS oldest, MAX(version) AS newest FROM workspace_filter_changes
         WHERE tenant_id = ? AND mode = ? AND workspace = ?`).get(scope.tenantId, scope.mode, scope.workspace)!;
      const oldest = Math.floor(log.newest / 1024) * 1024 - 2047;
      expect(oldest).toBeGreaterThan(1);
      expect(log).toEqual({ n: log.newest - oldest + 1, oldest, newest: log.newest });
      expect(log.n).toBeGreaterThanOrEqual(2048);
      expect(log.n).toBeLessThanOrEqual(3072);
    } finally {
      db.close();
    }
  });

  it('keeps a filter\'s seqs as a bitmap that grows both ways and masks a matrix\'s key column', () => {
    const bits = KeyBitmap.of([100, 163]);
    // Below its base by a number of keys that is not a whole word, above its top, and far above.
    for (const key of [37, 200, 5000]) bits.add(key);
    bits.delete(163);
    bits.delete(9_999_999);
    bits.add(200);
    const members = [36, 37, 38, 100, 163, 200, 5000, 5001].filter((k) => bits.has(k));
    expect(members).toEqual([37, 100, 200, 5000]);
    expect(bits.size).toBe(4);
    expect([...bits.maskOf(Float64Array.from([5000, 1, 37, 163, 100, 200, 7]), 6)]).toEqual([1, 0, 1, 0, 1, 1]);
    expect([...KeyBitmap.of([]).maskOf(Float64Array.from([0, 1]), 2)]).toEqual([0, 0]);
  });

  it('answers the first search of a filter made of broad conditions from their bitmaps read ahead, none of its seqs read', async () => {
    const scope = { ...scopeB, workspace: 'broad-conditions' };
    const small = Array.from({ length: 40 }, (_, i) => makeMemory(scope, {
      memoryType: i % 2 === 0 ? 'fact' : 'note', tags: i % 4 === 0 ? ['quarter', 'q'] : ['q'], metadata: { kind: i % 5 === 0 ? 'x' : 'y', on: i % 3 === 0 },
    }));
    const db = join(dir, 'broad.db');
    const own = createSqliteStorage({ file: db, synchronous: 'normal', searchThreads: 0, prefetchFiltersFrom: 1 });
    try {
      await own.memories.applyAtomically(scope, small.map((memory) => ({ kind: 'insert' as const, memory, vector: { modelId: 'm', vector: randomVector() } })));
      await own.warmUp();
      // Behind the caches' back (no filter version moves): the index rows of tag `quarter` and of metadata kind "y"
      // go. A filter read from SQLite now finds none; one combined from the bitmaps read ahead still finds them.
      const raw = new Database(db);
      raw.prepare("DELETE FROM memory_tags WHERE tag = 'quarter'").run();
      raw.prepare("DELETE FROM memory_metadata WHERE key = '$.kind' AND value = 'y'").run();
      raw.close();
      const total = async (filter: MemoryFilter) =>
        (await own.memories.searchSimilar(scope, { vector: randomVector(), modelId: 'm', limit: 5, minCosine: -1, filter })).total;
      const count = (keep: (m: Memory) => boolean) => small.filter(keep).length;
      expect(await total({ tagsAny: ['quarter'] })).toBe(10);
      expect(await total({ tagsAll: ['quarter', 'q'], types: ['fact'] })).toBe(10);
      expect(await total({ metadata: { kind: 'y', on: true } })).toBe(count((m) => m.metadata.kind === 'y' && m.metadata.on === true));
      expect(await total({ metadata: { kind: ['x', 'y'] }, types: ['note', 'fact'] })).toBe(40);
      // A value nothing has is not read ahead: that filter is read from SQLite, which no longer lists `y`.
      expect(await total({ metadata: { kind: ['y', 'absent'] } })).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('combines bitmaps word by word whatever their ranges (union, intersection)', () => {
    const a = KeyBitmap.of([3, 40, 97, 500]);
    const b = KeyBitmap.ofList('40,64,500,1001', 40, 1001);
    const members = (bits: KeyBitmap) => [3, 40, 64, 97, 500, 1001, 1002].filter((k) => bits.has(k));
    expect(members(KeyBitmap.union([a, b, new KeyBitmap()]))).toEqual([3, 40, 64, 97, 500, 1001]);
    expect(KeyBitmap.union([a, b]).size).toBe(6);
    expect(members(KeyBitmap.intersection(a, b))).toEqual([40, 500]);
    expect(KeyBitmap.intersection(a, b).size).toBe(2);
    expect(KeyBitmap.intersection(a, new KeyBitmap()).size).toBe(0);
    expect(KeyBitmap.intersection(KeyBitmap.of([1]), KeyBitmap.of([5000])).size).toBe(0);
    // The results are new sets: changing one leaves its sources as they were.
    const both = KeyBitmap.union([a]);
    both.add(7);
    expect([a.has(7), both.has(7), both.size]).toEqual([false, true, 5]);
  });

  it('reads a bitmap from SQLite\'s list of seqs (group_concat: any order, repeats) and refuses what is not one', () => {
    const bits = KeyBitmap.ofList('70,3,35,3,36,70', 3, 70);
    expect([2, 3, 4, 35, 36, 37, 69, 70, 71].filter((k) => bits.has(k))).toEqual([3, 35, 36, 70]);
    expect(bits.size).toBe(4);
    expect(KeyBitmap.ofList('12', 12, 12).has(12)).toBe(true);
    expect(KeyBitmap.ofList(null, 0, 0).size).toBe(0);
    expect(() => KeyBitmap.ofList('1,80', 1, 70)).toThrow(RangeError);
    expect(() => KeyBitmap.ofList('1,-2', 1, 70)).toThrow(RangeError);
    expect(() => KeyBitmap.ofList('1, 2', 1, 70)).toThrow(RangeError);
  });

  it('indexes the metadata of memories stored before the metadata index existed (migration 22)', () => {
    const db = new Database(join(dir, 'upgrade.db'));
    try {
      migrateSqlite(db, MIGRATIONS.filter((m) => m.version < 22));
      const m = makeMemory(scopeA, { metadata: { project: 'rare', source: { kind: ['web', 'file'] } } });
      db.prepare(INSERT_MEMORY_SQL).run(memoryParams(m, 'hash'));
      migrateSqlite(db);
      // Each path json_each can be given, with each value it yields there (an array's elements, an object's members).
      expect(db.prepare('SELECT key, value FROM memory_metadata ORDER BY key, value').all()).toEqual([
        { key: '$.project', value: 'rare' }, { key: '$.source', value: '["web","file"]' },
        { key: '$.source', value: '{"kind":["web","file"]}' }, { key: '$.source.kind', value: '["web","file"]' },
        { key: '$.source.kind', value: 'file' }, { key: '$.source.kind', value: 'web' },
      ]);
    } finally {
      db.close();
    }
  });
});
