import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteMemoryRepository } from '../../src/adapters/storage/sqlite/sqlite-memory.repository.ts';
import { SqliteOutbox } from '../../src/adapters/storage/sqlite/sqlite-outbox.ts';
import { SqliteVectorCache, type SqliteVectorCacheOptions, type VectorRowsLoader } from '../../src/adapters/storage/sqlite/sqlite-vector-cache.ts';
import { SqliteVectorLoader } from '../../src/adapters/storage/sqlite/sqlite-vector-loader.ts';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { ScanPool } from '../../src/adapters/storage/sqlite/vector-scan/scan-pool.ts';
import { MIN_COSINE_SLACK } from '../../src/core/memories/memory.repository.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { ApiKeyRecord } from '../../src/core/api-keys/api-key.types.ts';
import { axisVector, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';
import { matrixRowsByKey } from '../support/matrix-rows.ts';

/** Who deleted, when and why (the tombstone a delete leaves). */
const DELETION = { at: new Date(Date.UTC(2026, 0, 2)), by: 'user-1', reason: 'test' };

/**
 * The server's vector indexes against writes from another connection (the CLI): a workspace's index is reloaded when
 * that workspace changed, and only then (migration 15's workspace versions).
 */
const dir = mkdtempSync(join(tmpdir(), 'mnemo-vector-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function server(file: string, threads = 0, options: Omit<SqliteVectorCacheOptions, 'threads'> = {}) {
  const db = openSqlite(file);
  const cache = new SqliteVectorCache(db, { threads, ...options });
  const memories = createSqliteMemoryRepository(db, new SqliteOutbox(db), undefined, cache);
  return { db, cache, memories, close: async () => { await memories.close(); db.close(); } };
}

const query = (axis: number) => ({ vector: axisVector(4, axis), modelId: 'm', limit: 10, minCosine: 0.8, filter: {} });
const keyRecord = (): ApiKeyRecord => ({
  id: `key_${randomUUID().replace(/-/g, '')}`, tenantId: 't9', userId: 'u1', name: 'cli', tier: 'pro', mode: 'live',
  scopes: ['memories:read'], displayPrefix: 'mnemo_live_abcd', digest: randomUUID().replace(/-/g, '').padEnd(64, '0'),
  createdAt: new Date(), expiresAt: null, revokedAt: null, replacedBy: null,
});

describe('SQLite vector cache: per-workspace invalidation', () => {
  it('keeps other workspaces\' indexes across foreign writes, and reloads the written workspace on its next search', async () => {
    const file = join(dir, 'two.db');
    const srv = server(file);
    const cli = createSqliteStorage({ file });
    await srv.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 0) });
    await srv.memories.insert(makeMemory(scopeB), { modelId: 'm', vector: axisVector(4, 0) });
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(1);
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(1);
    const a = await srv.cache.get(scopeA, 'm', 4);
    const b = await srv.cache.get(scopeB, 'm', 4);

    // `mnemo keys create` from another process: no workspace changed, no index dropped.
    await cli.apiKeys.insert(keyRecord());
    expect(await srv.cache.get(scopeA, 'm', 4)).toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);

    // This process's own write is applied in place.
    await srv.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 0) });
    expect(await srv.cache.get(scopeA, 'm', 4)).toBe(a);
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(2);

    // Another connection writes to A: the next search in A sees it (A reloaded); B keeps its index.
    await cli.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 0) });
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(3);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);

    // ... and a foreign delete or vector update in B is seen too.
    const [bOnly] = (await srv.memories.searchSimilar(scopeB, query(0))).hits;
    await cli.memories.update(scopeB, bOnly!.memory.id, {}, new Date(), 'u', { modelId: 'm', vector: axisVector(4, 1) });
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(0);
    expect((await srv.memories.searchSimilar(scopeB, query(1))).total).toBe(1);
    await cli.memories.delete(scopeB, bOnly!.memory.id, DELETION);
    expect((await srv.memories.searchSimilar(scopeB, query(1))).total).toBe(0);
    await cli.close();
    await srv.close();
  });

  it('estimates cosines only from an index loaded and current: none before a search, after a foreign write, or while writes wait for a scan', async () => {
    const file = join(dir, 'estimates.db');
    const srv = server(file);
    const cli = createSqliteStorage({ file });
    const m = makeMemory(scopeA);
    await srv.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0, 1, 0.5) });
    for (const [axis, other, weight] of [[1, 2, 0.3], [2, 0, -0.4], [3, 1, 0.8]] as const) {
      await srv.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, axis, other, weight) });
    }
    const ask = { vector: axisVector(4, 0), modelId: 'm' };
    const ranked = (await srv.memories.rankSimilar(scopeA, { ...ask, limit: 10, minCosine: -1, filter: {} })).hits;
    expect(ranked).toHaveLength(4);
    // Each ref's own estimate bounds its own exact cosine, tightly.
    const all = await srv.memories.cosineEstimatesOf(scopeA, ranked.map((h) => h.ref), ask);
    expect(all.size).toBe(4);
    for (const h of ranked) {
      const e = all.get(h.ref)!;
      expect(e.error).toBeLessThan(1e-3);
      expect(Math.abs(e.cosine - h.cosine)).toBeLessThanOrEqual(e.error);
    }
    const hit = ranked.find((h) => Math.abs(h.cosine - 1 / Math.sqrt(1.25)) < 1e-6);
    // Another width than the index's: nothing (and the index is not dropped for it).
    const index = await srv.cache.get(scopeA, 'm', 4);
    expect((await srv.memories.cosineEstimatesOf(scopeA, [hit!.ref], { vector: axisVector(8, 0), modelId: 'm' })).size).toBe(0);
    expect(await srv.cache.get(scopeA, 'm', 4)).toBe(index);

    // Another connection moves the vector: until a search reloads the index, its codes no longer bound it.
    await cli.memories.update(scopeA, m.id, {}, new Date(), 'u', { modelId: 'm', vector: axisVector(4, 1) });
    expect((await srv.memories.cosineEstimatesOf(scopeA, [hit!.ref], ask)).size).toBe(0);
    await srv.memories.rankSimilar(scopeA, { ...ask, limit: 1, minCosine: -1, filter: {} });
    const fresh = (await srv.memories.cosineEstimatesOf(scopeA, [hit!.ref], ask)).get(hit!.ref);
    expect(Math.abs(fresh!.cosine - (await srv.memories.cosinesOf(scopeA, [hit!.ref], ask)).get(hit!.ref)!)).toBeLessThanOrEqual(fresh!.error);
    expect(fresh!.error).toBeLessThan(1e-3);
    expect(Math.abs(fresh!.cosine)).toBeLessThan(0.01);
    await cli.close();
    await srv.close();

    // A matrix whose writes wait for a running scan gives no estimates (their codes are not written yet).
    const pool = new ScanPool({ threads: 1, inlineBelow: 0 });
    try {
      const matrix = new VectorMatrix(4);
      matrix.upsert(1, axisVector(4, 0));
      expect(matrix.estimates(axisVector(4, 0), [1]).get(1)!.cosine).toBeCloseTo(1, 3);
      const scan = matrix.searchIn(pool, axisVector(4, 0), 1, -1);
      matrix.upsert(1, axisVector(4, 1));
      expect(matrix.estimates(axisVector(4, 0), [1]).size).toBe(0);
      await scan;
      expect(matrix.estimates(axisVector(4, 0), [1]).get(1)!.cosine).toBeCloseTo(0, 3);
    } finally {
      await pool.close();
    }
  });

  it('maintenance writes (reindex vectors, dropping other models, import) reload only the workspaces they touched', async () => {
    const srv = server(join(dir, 'maintenance.db'));
    const inA = makeMemory(scopeA);
    await srv.memories.insert(inA, { modelId: 'm', vector: axisVector(4, 0) });
    await srv.memories.insert(makeMemory(scopeB), { modelId: 'm', vector: axisVector(4, 0) });
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(1);
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(1);
    let a = await srv.cache.get(scopeA, 'm', 4);
    const b = await srv.cache.get(scopeB, 'm', 4);

    // `mnemo reindex` re-embeds A's memory with model m (new vector): A reloads and sees it, B's matrix stays.
    const written = await srv.memories.putVectors([{ scope: scopeA, id: inA.id, title: inA.title, content: inA.content, vector: { modelId: 'm', vector: axisVector(4, 2) } }]);
    expect(written).toBe(1);
    expect((await srv.memories.searchSimilar(scopeA, query(2))).total).toBe(1);
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(0);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);

    // Dropping another model's vectors in A only.
    a = await srv.cache.get(scopeA, 'm', 4);
    await srv.memories.putVectors([{ scope: scopeA, id: inA.id, title: inA.title, content: inA.content, vector: { modelId: 'old', vector: axisVector(4, 1) } }]);
    expect(await srv.memories.dropOtherVectors({ tenantId: scopeA.tenantId }, 'm')).toBe(1);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);
    expect((await srv.memories.searchSimilar(scopeA, query(2))).total).toBe(1);

    // `mnemo import` into A: A sees the imported memory, B keeps its matrix.
    a = await srv.cache.get(scopeA, 'm', 4);
    const imported = await srv.memories.importMemories([{ memory: makeMemory(scopeA), vectors: [{ modelId: 'm', vector: axisVector(4, 3) }] }]);
    expect(imported.inserted).toBe(1);
    expect((await srv.memories.searchSimilar(scopeA, query(3))).total).toBe(1);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(1);
    await srv.close();
  });

  it('loads big workspaces in a worker thread, warms every workspace at start, and scans in workers', async () => {
    const file = join(dir, 'big.db');
    const writer = createSqliteStorage({ file, synchronous: 'normal' });
    // Big enough (rows x dims) to be scanned in the workers rather than inline (the loader thread is forced by workerLoadAbove: 0).
    const rows = 4200;
    const dims = 128;
    // Row i in A when even, in B when odd; one transaction per workspace (4,200 single inserts took seconds).
    for (const [parity, scope] of [[0, scopeA], [1, scopeB]] as const) {
      await writer.memories.applyAtomically(scope, Array.from({ length: rows / 2 }, (_, k) => 2 * k + parity).map((i) => ({
        kind: 'insert' as const, memory: makeMemory(scope), vector: { modelId: 'm', vector: axisVector(dims, i % 4, (i + 1) % 4, (i % 97) / 100) } })));
    }
    await writer.close();
    const srv = server(file, 3, { workerLoadAbove: 0 });
    await srv.cache.warmUp();
    expect(srv.cache.workerLoads).toBe(4); // two load threads per (workspace, model) with 3 scan threads
    const a = await srv.cache.get(scopeA, 'm', dims);
    const b = await srv.cache.get(scopeB, 'm', dims);
    expect(a.size * dims).toBeGreaterThanOrEqual(srv.cache.pool()!.inlineBelow); // not scanned on the event loop
    expect(a.size).toBe(rows / 2);
    expect(b.size).toBe(rows / 2);
    const inline = server(file, 0);
    for (const axis of [0, 1, 2, 3]) {
      for (const scope of [scopeA, scopeB]) {
        const q = { ...query(axis), vector: axisVector(dims, axis), minCosine: 0, limit: 7 };
        const viaWorkers = await srv.memories.searchSimilar(scope, q);
        const onLoop = await inline.memories.searchSimilar(scope, q);
        expect(viaWorkers.hits.map((h) => [h.memory.id, h.cosine])).toEqual(onLoop.hits.map((h) => [h.memory.id, h.cosine]));
        expect(viaWorkers.total).toBe(onLoop.total);
        expect(viaWorkers.total).toBeGreaterThan(0);
      }
    }
    expect(await srv.cache.get(scopeA, 'm', dims)).toBe(a);
    // Another connection writes to A: A's index is reloaded, and the scan threads are told to let go of the old one
    // (each worker holds a retired matrix's memory until then).
    const pool = srv.cache.pool()!;
    expect(pool.stats.retired).toBe(0);
    const near0 = { ...query(0), vector: axisVector(dims, 0), minCosine: 0, limit: 3 };
    const before = (await srv.memories.searchSimilar(scopeA, near0)).total;
    const cli = createSqliteStorage({ file });
    await cli.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(dims, 0) });
    await cli.close();
    expect((await srv.memories.searchSimilar(scopeA, near0)).total).toBe(before + 1);
    const reloaded = await srv.cache.get(scopeA, 'm', dims);
    expect(reloaded).not.toBe(a);
    expect(pool.stats.retired).toBe(1);
    // A search still holding the retired matrix is answered all the same (the worker builds its kernel again).
    const late = await a.searchIn(pool, axisVector(dims, 1), 5, 0.5);
    expect(late).toEqual(a.search(axisVector(dims, 1), 5, 0.5));
    expect(late.total).toBeGreaterThan(0);
    await inline.close();
    await srv.close();
    expect(srv.cache.pool()).toBeNull(); // closed: no new threads start
  });
});

describe('SQLite vector cache: a caller busy beside the scan', () => {
  it('ranks a hybrid search\'s semantic leg (the caller busy meanwhile) in one scan thread below the size that needs both', async () => {
    // 4,100 × 512: enough products for two parts, below the size at which a busy caller still gets every thread.
    const dims = 512;
    const file = join(dir, 'busy-caller.db');
    const writer = createSqliteStorage({ file, synchronous: 'normal' });
    const stored = vectors(5, 4100, dims);
    await writer.memories.applyAtomically(scopeA, stored.map((vector) => ({ kind: 'insert' as const, memory: makeMemory(scopeA), vector: { modelId: 'm', vector } })));
    await writer.close();
    const srv = server(file, 2);
    const stats = () => srv.cache.pool()!.stats.rankedInWorkers;
    for (const vector of stored.slice(0, 3)) {
      const query = { vector, modelId: 'm', limit: 10, minCosine: 0, filter: {} };
      const before = stats();
      const idle = await srv.memories.searchSimilar(scopeA, query);
      expect(stats() - before).toBe(2);
      // rankSimilar's caller ranks keywords meanwhile (the port): the scan leaves it a core.
      const busy = await srv.memories.rankSimilar(scopeA, query);
      expect(stats() - before).toBe(3);
      expect(busy.hits.map((h) => h.cosine)).toEqual(idle.hits.map((h) => h.cosine));
      expect(busy.total).toBe(idle.total);
      expect(busy.total).toBeGreaterThan(0);
    }
    await srv.close();
  });
});

/** Deterministic pseudo-random vectors (an LCG), with some exact duplicates: many near-ties. */
function vectors(seed: number, count: number, dims: number): Float32Array[] {
  let s = seed;
  const next = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 * 2 - 1; };
  const out: Float32Array[] = [];
  for (let i = 0; i < count; i++) out.push(i % 13 === 7 ? out[i - 1]!.slice() : Float32Array.from({ length: dims }, next));
  return out;
}

/** A store of `rows` memories in each of scopes A and B (model m), plus a few of another model in A. */
async function seed(file: string, rows: number, dims: number): Promise<Map<Scope, Float32Array[]>> {
  const writer = createSqliteStorage({ file, synchronous: 'normal' });
  const byScope = new Map<Scope, Float32Array[]>();
  for (const [i, scope] of [scopeA, scopeB].entries()) {
    const vs = vectors(11 + i, rows, dims);
    byScope.set(scope, vs);
    await writer.memories.applyAtomically(scope, vs.map((vector) => ({ kind: 'insert' as const, memory: makeMemory(scope), vector: { modelId: 'm', vector } })));
  }
  await writer.memories.applyAtomically(scopeA, vectors(99, 5, 8).map((vector) => ({ kind: 'insert' as const, memory: makeMemory(scopeA), vector: { modelId: 'other', vector } })));
  await writer.close();
  return byScope;
}

/**
 * `seed`'s store as a file of its own named `name`: seeded once per size for the file (half a second each time), then
 * copied, closed and checkpointed, so each test starts from the same rows on a file no other test opens.
 */
const seededOnce = new Map<string, Promise<{ file: string; byScope: Map<Scope, Float32Array[]> }>>();
async function seeded(name: string, rows: number, dims: number): Promise<{ file: string; byScope: Map<Scope, Float32Array[]> }> {
  const size = `${rows}x${dims}`;
  let original = seededOnce.get(size);
  if (!original) {
    const file = join(dir, `seeded-${size}.db`);
    original = seed(file, rows, dims).then((byScope) => ({ file, byScope }));
    seededOnce.set(size, original);
  }
  const { file, byScope } = await original;
  // Closed by the writer, the store is the one file (SQLite checkpoints and removes the WAL on the last close).
  expect(existsSync(`${file}-wal`)).toBe(false);
  copyFileSync(file, join(dir, name));
  return { file: join(dir, name), byScope };
}

describe('SQLite vector cache: the cold-start loader', () => {
  const dims = 48;
  const rows = 1500;
  const q = (vector: Float32Array, limit = 10, minCosine = 0.2) => ({ vector, modelId: 'm', limit, minCosine, filter: {} });

  it('fills, in a worker thread, the very matrix upserting every stored vector builds, and answers the same', async () => {
    const { file, byScope } = await seeded('loader-same.db', rows, dims);
    const viaWorker = server(file, 0, { workerLoadAbove: 0 });
    const here = server(file, 0, { workerLoadAbove: Number.POSITIVE_INFINITY });
    for (const scope of [scopeA, scopeB]) {
      const loaded = await viaWorker.cache.get(scope, 'm', dims);
      // The old path: each stored vector upserted one by one, keyed by its memory's seq.
      const reference = new VectorMatrix(dims);
      const stored = viaWorker.db.prepare(`SELECT v.memory_seq AS seq, v.vector FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
        WHERE m.tenant_id = ? AND m.workspace = ? AND v.model_id = 'm'`).all(scope.tenantId, scope.workspace) as { seq: number; vector: Buffer }[];
      for (const r of stored) reference.upsert(r.seq, new Float32Array(r.vector.buffer, r.vector.byteOffset, dims));
      expect(loaded.size).toBe(rows);
      expect(matrixRowsByKey(loaded)).toEqual(matrixRowsByKey(reference));
      expect(matrixRowsByKey(await here.cache.get(scope, 'm', dims))).toEqual(matrixRowsByKey(reference));
      for (const vector of byScope.get(scope)!.slice(0, 6)) {
        const a = await viaWorker.memories.searchSimilar(scope, q(vector));
        const b = await here.memories.searchSimilar(scope, q(vector));
        expect(a.total).toBeGreaterThan(0);
        expect(a.hits.map((h) => [h.memory.id, h.cosine])).toEqual(b.hits.map((h) => [h.memory.id, h.cosine]));
        expect(a.total).toBe(b.total);
        expect(reference.search(vector, 10, 0.2 - MIN_COSINE_SLACK).total).toBe(a.total); // q()'s bound, as the adapter applies it
      }
    }
    expect(viaWorker.cache.workerLoads).toBe(2);
    expect(here.cache.workerLoads).toBe(0);
    // The other model of A loads on its own, at its own width.
    expect((await viaWorker.cache.get(scopeA, 'other', 8)).size).toBe(5);
    await viaWorker.close();
    await here.close();
  });

  it('keeps writes of this process made while rows load (replayed), and reloads for another connection\'s', async () => {
    const { file, byScope } = await seeded('loader-writes.db', rows, dims);
    // Runs `during` after the worker has read its snapshot and before the rows are adopted: every write in it lands
    // after the load's snapshot, so only the replay (or a reload) can make it visible.
    let during: (() => Promise<void>) | null = null;
    const db = openSqlite(file);
    const real = new SqliteVectorLoader(db, { workerAbove: 0 });
    const loader: VectorRowsLoader = {
      get workerLoads() { return real.workerLoads; },
      close: () => real.close(),
      load: async (...args) => {
        const loaded = await real.load(...args);
        const hook = during;
        during = null;
        await hook?.();
        return loaded;
      },
    };
    const cache = new SqliteVectorCache(db, { loader });
    const memories = createSqliteMemoryRepository(db, new SqliteOutbox(db), undefined, cache);
    const cli = createSqliteStorage({ file });
    const [firstHit] = (await cli.memories.searchSimilar(scopeA, q(byScope.get(scopeA)![0]!, 1, 0.98))).hits;
    const fresh = axisVector(dims, 3);
    const moved = axisVector(dims, 5);
    const inserted = makeMemory(scopeA);
    during = async () => {
      await memories.insert(inserted, { modelId: 'm', vector: fresh });
      await memories.update(scopeA, firstHit!.memory.id, {}, new Date(), 'u', { modelId: 'm', vector: moved });
    };
    // A search arriving while A loads waits for the load, and sees both writes.
    const hits = await memories.searchSimilar(scopeA, q(fresh, 3, 0.98));
    expect(hits.hits.map((h) => h.memory.id)).toEqual([inserted.id]);
    expect((await memories.searchSimilar(scopeA, q(moved, 3, 0.98))).hits.map((h) => h.memory.id)).toEqual([firstHit!.memory.id]);
    expect((await memories.searchSimilar(scopeA, q(byScope.get(scopeA)![0]!, 3, 0.998))).hits.map((h) => h.memory.id)).not.toContain(firstHit!.memory.id);
    // Those writes were this process's: the version moved with them, no reload.
    const a = await cache.get(scopeA, 'm', dims);
    expect(a.size).toBe(rows + 1);
    expect(real.workerLoads).toBe(1);
    const deleted = makeMemory(scopeB);
    await cli.memories.insert(deleted, { modelId: 'm', vector: axisVector(dims, 7) });

    // A delete of this process during B's load: replayed, no reload.
    during = () => memories.delete(scopeB, deleted.id, DELETION).then(() => undefined);
    expect((await memories.searchSimilar(scopeB, q(axisVector(dims, 7), 3, 0.98))).total).toBe(0);
    expect((await cache.get(scopeB, 'm', dims)).size).toBe(rows);
    expect(real.workerLoads).toBe(2);

    // A write of another connection during a load of B: the version read with the rows no longer matches, B reloads.
    cache.clear();
    const foreign = makeMemory(scopeB);
    during = () => cli.memories.insert(foreign, { modelId: 'm', vector: axisVector(dims, 9) });
    expect((await memories.searchSimilar(scopeB, q(axisVector(dims, 9), 3, 0.98))).hits.map((h) => h.memory.id)).toEqual([foreign.id]);
    expect(real.workerLoads).toBe(4);
    expect((await cache.get(scopeB, 'm', dims)).size).toBe(rows + 1);
    await cli.close();
    await memories.close();
    db.close();
  });

  it('reads a workspace on its own connection when the loader thread fails (the store file moved under the server)', async () => {
    const { file, byScope } = await seeded('loader-moved.db', rows, dims);
    const srv = server(file, 0, { workerLoadAbove: 0 });
    const here = server(file, 0, { workerLoadAbove: Number.POSITIVE_INFINITY });
    const reference = matrixRowsByKey(await here.cache.get(scopeA, 'm', dims));
    const expected = await here.memories.searchSimilar(scopeA, q(byScope.get(scopeA)![2]!));
    // Open connections keep reading the moved file; a loader thread opens it by name, which no longer exists.
    renameSync(file, `${file}.moved`);
    expect(existsSync(file)).toBe(false);
    const loaded = await srv.cache.get(scopeA, 'm', dims);
    expect(srv.cache.workerLoads).toBe(1);
    expect(loaded.size).toBe(rows);
    expect(matrixRowsByKey(loaded)).toEqual(reference);
    const answer = await srv.memories.searchSimilar(scopeA, q(byScope.get(scopeA)![2]!));
    expect(expected.total).toBeGreaterThan(0);
    expect(answer.hits.map((h) => [h.memory.id, h.cosine])).toEqual(expected.hits.map((h) => [h.memory.id, h.cosine]));
    expect(answer.total).toBe(expected.total);
    await srv.close();
    await here.close();
  });

  it('answers a search sent while warm-up loads, the same as a loaded cache does', async () => {
    const { file, byScope } = await seeded('loader-search.db', rows, dims);
    const srv = server(file, 2, { workerLoadAbove: 0 });
    const here = server(file, 0, { workerLoadAbove: Number.POSITIVE_INFINITY });
    const warming = srv.cache.warmUp();
    // B is searched while warm-up is still on A (or loads B at once beside it): the answer is complete.
    const during = await Promise.all([scopeB, scopeA].map((scope) => srv.memories.searchSimilar(scope, q(byScope.get(scope)![3]!, 10, 0.1))));
    await warming;
    for (const [i, scope] of [scopeB, scopeA].entries()) {
      const expected = await here.memories.searchSimilar(scope, q(byScope.get(scope)![3]!, 10, 0.1));
      expect(expected.total).toBeGreaterThan(0);
      expect(during[i]!.hits.map((h) => [h.memory.id, h.cosine])).toEqual(expected.hits.map((h) => [h.memory.id, h.cosine]));
      expect(during[i]!.total).toBe(expected.total);
    }
    expect(srv.cache.workerLoads).toBeGreaterThanOrEqual(2);
    await srv.close();
    await here.close();
  });
});
