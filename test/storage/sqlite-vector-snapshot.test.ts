import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteMemoryRepository } from '../../src/adapters/storage/sqlite/sqlite-memory.repository.ts';
import { SqliteOutbox } from '../../src/adapters/storage/sqlite/sqlite-outbox.ts';
import { SqliteVectorCache, type VectorRowsLoader } from '../../src/adapters/storage/sqlite/sqlite-vector-cache.ts';
import { SqliteVectorLoader } from '../../src/adapters/storage/sqlite/sqlite-vector-loader.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { makeMemory, scopeA } from '../support/fixtures.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { readMatrixFile, temporaryFileOf, writeMatrixFile } from '../../src/adapters/storage/sqlite/vector-scan/matrix-file.ts';
import { allocateRows, layoutFor, SMALL_BLOCK_ROWS } from '../../src/adapters/storage/sqlite/vector-scan/matrix-storage.ts';

/**
 * Persisted vector codes (sqlite-vector-snapshots.ts): a restart reads them instead of the floats and answers exactly
 * as a load from the floats does; a snapshot the store moved past, cut short or replaced is never used.
 */
const dir = mkdtempSync(join(tmpdir(), 'mnemo-vector-snapshot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DIMS = 24;
const ROWS = 300;
const random = seededRandom(7);
const randomVector = () => Float32Array.from({ length: DIMS }, () => random() * 2 - 1);

/** A server's store and vector cache on `file`, counting the loads from the floats. */
function server(file: string, resaveAfterMs?: number) {
  const db = openSqlite(file);
  const floats = new SqliteVectorLoader(db);
  const counted = { loads: 0 };
  const loader: VectorRowsLoader = {
    load: (...args) => { counted.loads++; return floats.load(...args); },
    close: () => floats.close(),
    get workerLoads() { return floats.workerLoads; },
  };
  const cache = new SqliteVectorCache(db, { threads: 0, snapshotAbove: 0, loader, ...(resaveAfterMs === undefined ? {} : { resaveAfterMs }) });
  const memories = createSqliteMemoryRepository(db, new SqliteOutbox(db), undefined, cache);
  return { counted, cache, memories, close: async () => { await memories.close(); db.close(); } };
}

/** The exact top 10 (seq, cosine) of the workspace for `query`, from the stored floats. */
function exactTop(file: string, query: Float32Array): { key: number; cosine: number }[] {
  const db = new Database(file, { readonly: true });
  const rows = db.prepare<[], { seq: number; vector: Buffer }>('SELECT memory_seq AS seq, vector FROM memory_vectors').all();
  db.close();
  const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0));
  const scored = rows.map(({ seq, vector }) => {
    const v = new Float32Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + DIMS * 4));
    let dot = 0;
    for (let i = 0; i < DIMS; i++) dot += v[i]! * query[i]!;
    return { key: seq, cosine: dot / (norm(v) * norm(query)) };
  });
  return scored.sort((a, b) => b.cosine - a.cosine).slice(0, 10);
}

async function searchTop(srv: ReturnType<typeof server>, query: Float32Array) {
  const matrix = await srv.cache.get(scopeA, 'm', DIMS);
  return matrix.search(query, 10, -1).hits;
}

function expectExact(hits: { key: number; cosine: number }[], file: string, query: Float32Array): void {
  const exact = exactTop(file, query);
  expect(hits.map((h) => h.key)).toEqual(exact.map((h) => h.key));
  hits.forEach((h, i) => expect(h.cosine).toBeCloseTo(exact[i]!.cosine, 5));
}

const snapshotFiles = (file: string) => readdirSync(`${file}-vectors`).filter((name) => name.endsWith('.matrix'));
const queries = Array.from({ length: 3 }, randomVector);

async function seeded(name: string): Promise<string> {
  const file = join(dir, name);
  const srv = server(file);
  await srv.memories.applyAtomically(scopeA, Array.from({ length: ROWS }, () => ({
    kind: 'insert' as const, memory: makeMemory(scopeA), vector: { modelId: 'm', vector: randomVector() },
  })));
  await srv.close();
  return file;
}

describe('SQLite vector snapshots', () => {
  it('a restart reads the persisted codes instead of the floats, with the same exact answers; own writes persist at close', async () => {
    const file = await seeded('restart.db');
    const first = server(file);
    const before = await Promise.all(queries.map((q) => searchTop(first, q)));
    expect(first.counted.loads).toBe(1);
    // Saved once loaded from the floats, not only at close (a crash later keeps it, while nothing is written).
    await first.cache.snapshotsWritten();
    expect(snapshotFiles(file)).toHaveLength(1);
    await first.close();
    // A temporary file a crashed process left behind goes with the next save.
    const leftover = join(`${file}-vectors`, `${snapshotFiles(file)[0]}.999999999.tmp`);
    writeFileSync(leftover, 'cut short');

    const second = server(file);
    for (const [i, q] of queries.entries()) {
      const hits = await searchTop(second, q);
      expect(hits).toEqual(before[i]);
      expectExact(hits, file, q);
    }
    expect(second.counted.loads).toBe(0);
    // A write of this process after the load: applied in place, and saved with the index when the store closes.
    const best = Float32Array.from(queries[0]!);
    const [written] = await second.memories.applyAtomically(scopeA, [{ kind: 'insert', memory: makeMemory(scopeA), vector: { modelId: 'm', vector: best } }]);
    await second.close();
    expect(existsSync(leftover)).toBe(false);

    const third = server(file);
    const hits = await searchTop(third, queries[0]!);
    expect(third.counted.loads).toBe(0);
    expectExact(hits, file, queries[0]!);
    expect((await third.memories.searchSimilar(scopeA, { vector: best, modelId: 'm', limit: 1, minCosine: 0.99, filter: {} })).hits[0]!.memory.id)
      .toBe(written!.id);
    await third.close();
  });

  it('never uses a snapshot the store moved past (another connection wrote), cut short, or replaced by an older one', async () => {
    const file = await seeded('stale.db');
    const first = server(file);
    await searchTop(first, queries[0]!);
    await first.close();
    const [name] = snapshotFiles(file);
    const path = join(`${file}-vectors`, name!);
    const older = `${path}.older`;
    copyFileSync(path, older);

    // Another process writes the query's best match while the server is down: the snapshot no longer reflects the store.
    const cli = createSqliteStorage({ file });
    await cli.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: queries[1]! });
    await cli.close();
    const afterForeign = server(file);
    expectExact(await searchTop(afterForeign, queries[1]!), file, queries[1]!);
    expect(afterForeign.counted.loads).toBe(1);
    await afterForeign.close();

    // The snapshot saved after that load, cut short.
    truncateSync(path, 5000);
    const afterCut = server(file);
    expectExact(await searchTop(afterCut, queries[2]!), file, queries[2]!);
    expect(afterCut.counted.loads).toBe(1);
    await afterCut.close();

    // The first snapshot put back over the current one: a whole file, of an older version and token.
    copyFileSync(older, path);
    const afterSwap = server(file);
    expectExact(await searchTop(afterSwap, queries[1]!), file, queries[1]!);
    expect(afterSwap.counted.loads).toBe(1);
    await afterSwap.close();
  });

  it('a deleted memory\'s codes leave the disk when the delete commits; the index is saved again without them', async () => {
    const file = await seeded('forget.db');
    const srv = server(file, 20);
    // The two rows nearest a query: the first is forgotten through a batch delete, the second through a single one.
    const [first, second] = await searchTop(srv, queries[0]!);
    await srv.cache.snapshotsWritten();
    const savedKeys = async (): Promise<number[]> => {
      const [name] = snapshotFiles(file);
      const read = name && await readMatrixFile(join(`${file}-vectors`, name), DIMS, (n) => n);
      return read ? Array.from(new Float64Array(read.rows.keys, 0, read.header.count)) : [];
    };
    expect(await savedKeys()).toEqual(expect.arrayContaining([first!.key, second!.key]));
    const idOf = (seq: number): string => {
      const reader = new Database(file, { readonly: true });
      try {
        return reader.prepare('SELECT id FROM memories WHERE seq = ?').pluck().get(seq) as string;
      } finally {
        reader.close();
      }
    };
    const deletion = { at: new Date(), by: 'test', reason: 'forget' as const };

    await srv.memories.applyAtomically(scopeA, [{ kind: 'delete', id: idOf(first!.key), deletion }]);
    // Before any save could run: no file holds the workspace's codes any more.
    expect(snapshotFiles(file)).toEqual([]);
    // Saved again once no delete followed for resaveAfterMs.
    await new Promise((resolve) => setTimeout(resolve, 40));
    await srv.cache.snapshotsWritten();
    expect(await savedKeys()).toHaveLength(ROWS - 1);
    expect(await savedKeys()).not.toContain(first!.key);

    await srv.memories.delete(scopeA, idOf(second!.key), deletion);
    expect(snapshotFiles(file)).toEqual([]);
    // Closing before the timer saves it as well.
    await srv.close();
    const kept = await savedKeys();
    expect(kept).toHaveLength(ROWS - 2);
    expect(kept).not.toContain(second!.key);

    // The next start reads the saved index (no load from the floats) and answers exactly without them.
    const restarted = server(file);
    expectExact(await searchTop(restarted, queries[0]!), file, queries[0]!);
    expect(restarted.counted.loads).toBe(0);
    await restarted.close();
  });

  it('a write abandoned midway (closing took too long) leaves the file it replaces as it was, and no temporary file', async () => {
    const path = join(dir, 'abandoned.matrix');
    const rows = allocateRows(layoutFor(DIMS, SMALL_BLOCK_ROWS), 8);
    await writeMatrixFile(path, rows, { token: 'kept', version: 3, dims: DIMS, count: 8 });
    const abandon = new AbortController();
    abandon.abort();
    await expect(writeMatrixFile(path, rows, { token: 'abandoned', version: 4, dims: DIMS, count: 8 }, abandon.signal)).rejects.toThrow();
    expect(existsSync(temporaryFileOf(path))).toBe(false);
    expect((await readMatrixFile(path, DIMS, (n) => n))?.header).toEqual({ token: 'kept', version: 3, dims: DIMS, count: 8 });
  });
});
