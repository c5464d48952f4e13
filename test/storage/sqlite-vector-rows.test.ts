import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import {
  fillRows, joinParts, planLoad, readScopeRows, scopeVectorStats,
} from '../../src/adapters/storage/sqlite/sqlite-vector-rows.ts';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { LARGE_BLOCK_ROWS, SMALL_BLOCK_ROWS } from '../../src/adapters/storage/sqlite/vector-scan/matrix-storage.ts';
import type { Scope } from '../../src/core/scope.ts';
import { makeMemory, scopeA, scopeB } from '../support/fixtures.ts';
import { matrixRowsByKey } from '../support/matrix-rows.ts';

/** Who deleted, when and why (the tombstone a delete leaves). */
const DELETION = { at: new Date(Date.UTC(2026, 0, 2)), by: 'user-1', reason: 'test' };

/**
 * The loader's row filling (what each loader thread runs, here on one connection): two fillers splitting the seq range
 * and filling the shared rows from both ends, joined into a dense matrix, also when rows were deleted or added
 * between planning the load (its COUNT) and reading, or when more rows arrived than the buffers hold.
 */
const dir = mkdtempSync(join(tmpdir(), 'mnemo-vector-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dims = 16;

function vector(i: number): Float32Array {
  return Float32Array.from({ length: dims }, (_, d) => Math.sin(i * 31 + d * 7) + (d === i % dims ? 2 : 0));
}

async function store(name: string, rows: number) {
  const file = join(dir, name);
  const storage = createSqliteStorage({ file, synchronous: 'normal' });
  const ids: string[] = [];
  for (const scope of [scopeA, scopeB]) {
    const steps = Array.from({ length: rows }, (_, i) => {
      const memory = makeMemory(scope);
      if (scope === scopeA) ids.push(memory.id);
      return { kind: 'insert' as const, memory, vector: { modelId: 'm', vector: vector(i) } };
    });
    await storage.memories.applyAtomically(scope, steps);
  }
  return { storage, db: openSqlite(file), ids };
}

/** The scope's rows now, by seq, as a matrix built by upserts (the reference). */
function reference(db: ReturnType<typeof openSqlite>, scope: Scope): VectorMatrix {
  const m = new VectorMatrix(dims);
  const rows = db.prepare(`SELECT v.memory_seq AS seq, v.vector FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
    WHERE m.tenant_id = ? AND v.model_id = 'm'`).all(scope.tenantId) as { seq: number; vector: Buffer }[];
  for (const r of rows) m.upsert(r.seq, new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + dims * 4)));
  return m;
}

const noSource = { read: () => undefined };

/** Plans a load of A as the loader does, lets `meanwhile` change the store, then fills with two fillers. */
async function twoFillers(db: ReturnType<typeof openSqlite>, meanwhile: () => Promise<void>, capacity?: number) {
  const { n, lo, hi } = scopeVectorStats(db).get(scopeA.tenantId, scopeA.mode, scopeA.workspace, 'm')!;
  const { rows, ranges, targets } = planLoad(dims, n, lo!, hi!, 2, capacity);
  expect(ranges).toHaveLength(2);
  await meanwhile();
  // The second filler first: the order the threads run in must not matter.
  const second = fillRows(db, scopeA, 'm', dims, ranges[1]!, targets[1]!);
  const first = fillRows(db, scopeA, 'm', dims, ranges[0]!, targets[0]!);
  const count = joinParts(dims, targets[0]!, first.inPlanned, second.inPlanned);
  return { matrix: VectorMatrix.fromRows(dims, rows, count, noSource), truncated: first.truncated || second.truncated, first, second };
}

describe('SQLite vector rows: filling a matrix from both ends', () => {
  it('fills exactly the workspace\'s rows, as upserts would write them, with nothing planned changed', async () => {
    const { storage, db } = await store('same.db', 300);
    const { matrix, truncated, first, second } = await twoFillers(db, async () => {});
    expect(truncated).toBe(false);
    expect(first.inPlanned).toBeGreaterThan(100); // both fillers had a real share
    expect(second.inPlanned).toBeGreaterThan(100);
    expect(matrix.size).toBe(300);
    expect(matrixRowsByKey(matrix)).toEqual(matrixRowsByKey(reference(db, scopeA)));
    // readScopeRows (one filler, here) agrees.
    const one = readScopeRows(db, scopeA, 'm', dims);
    expect(matrixRowsByKey(VectorMatrix.fromRows(dims, one.rows, one.count, noSource))).toEqual(matrixRowsByKey(matrix));
    db.close();
    await storage.close();
  });

  // Room for 9,000 rows lays the codes out in large blocks (blockRowsFor): rows move between layouts' positions alike.
  it.each([undefined, 9000])('closes the gap left by rows deleted after planning, in either half (capacity %s)', async (capacity) => {
    const { storage, db, ids } = await store(`deleted-${capacity}.db`, 300);
    const { matrix } = await twoFillers(db, async () => {
      for (const i of [0, 5, 140, 160, 250, 298, 299]) await storage.memories.delete(scopeA, ids[i]!, DELETION);
    }, capacity);
    expect(matrix.buffers().blockRows).toBe(capacity ? LARGE_BLOCK_ROWS : SMALL_BLOCK_ROWS);
    expect(matrix.size).toBe(293);
    expect(matrixRowsByKey(matrix)).toEqual(matrixRowsByKey(reference(db, scopeA)));
    db.close();
    await storage.close();
  });

  it('keeps rows added after planning past the planned ones, deletions beside', async () => {
    const { storage, db, ids } = await store('added.db', 300);
    // 15 added: within the spare rows (300 + 300 / 16 = 318 in all).
    const { matrix, truncated } = await twoFillers(db, async () => {
      await storage.memories.delete(scopeA, ids[10]!, DELETION);
      for (let i = 0; i < 15; i++) await storage.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: vector(1000 + i) });
    });
    expect(truncated).toBe(false);
    expect(matrix.size).toBe(314);
    expect(matrixRowsByKey(matrix)).toEqual(matrixRowsByKey(reference(db, scopeA)));
    db.close();
    await storage.close();
  });

  it('says so when more rows arrived than the buffers hold, and leaves valid distinct rows', async () => {
    const { storage, db } = await store('truncated.db', 300);
    const { matrix, truncated } = await twoFillers(db, async () => {}, 120);
    expect(truncated).toBe(true);
    expect(matrix.size).toBe(120);
    const all = matrixRowsByKey(reference(db, scopeA));
    for (const [key, row] of matrixRowsByKey(matrix)) expect(row).toEqual(all.get(key));
    db.close();
    await storage.close();
  });
});
