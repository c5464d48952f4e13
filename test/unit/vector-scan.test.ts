import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { exactScore } from '../../src/adapters/storage/sqlite/vector-scan/exact-score.ts';
import { ScanPool } from '../../src/adapters/storage/sqlite/vector-scan/scan-pool.ts';
import { BACKGROUND_NICE_STEP } from '../../src/adapters/storage/sqlite/vector-scan/background-priority.ts';
import {
  allocateRows, blockRowsFor, codeIndex, LARGE_BLOCK_ROWS, layoutFor, rowCodesDot, SMALL_BLOCK_ROWS, unitRowInto, viewsOf, writeRow,
} from '../../src/adapters/storage/sqlite/vector-scan/matrix-storage.ts';
import { writeQueryPairs } from '../../src/adapters/storage/sqlite/vector-scan/scan-part.ts';
import { quantizeInto } from '../../src/adapters/storage/sqlite/vector-scan/quantize.ts';
import { int8Dots, MAX_PAGES } from '../../src/adapters/storage/sqlite/vector-scan/int8-dot-kernel.ts';
import { wasm } from '../../src/adapters/storage/sqlite/vector-scan/wasm.ts';
import { clustered } from '../support/clustered-vectors.ts';
import { seededRandom } from '../support/seeded-random.ts';

/**
 * The int8 pre-scan with exact re-rank, in this thread and in worker threads, against the plainest possible exact
 * scan: every row scored with the float32 rows, sorted by score then key, counted against the threshold.
 */
const pool = new ScanPool({ threads: 2, inlineBelow: 0 });
afterAll(() => pool.close());

/** `v` scaled to unit length, in float32. */
function toUnit(v: ArrayLike<number>, dims: number): Float32Array {
  let sq = 0;
  for (let i = 0; i < dims; i++) sq += v[i]! * v[i]!;
  const inv = sq > 0 ? 1 / Math.sqrt(sq) : 0;
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = v[i]! * inv;
  return out;
}

/** Each row's unit vector, made once: the reference scans the same rows for every query (no test changes a row in place). */
const units = new WeakMap<ArrayLike<number>, Float32Array>();

function reference(rows: Map<number, Float32Array>, query: ArrayLike<number>, k: number, minCosine: number, allowed?: Set<number>) {
  const dims = query.length;
  const unit = (v: Float32Array) => {
    let u = units.get(v);
    if (u === undefined || u.length !== dims) units.set(v, (u = toUnit(v, dims)));
    return u;
  };
  const q = toUnit(query, dims);
  const scored = [...rows].filter(([key]) => !allowed || allowed.has(key))
    .map(([key, v]) => ({ key, cosine: exactScore(unit(v), 0, q, dims) }))
    .filter((h) => h.cosine >= minCosine)
    .sort((a, b) => b.cosine - a.cosine || a.key - b.key);
  return { hits: scored.slice(0, k), total: scored.length };
}

const vectorArb = (dims: number) => fc.array(fc.float({ min: -1, max: 1, noNaN: true, noDefaultInfinity: true }), { minLength: dims, maxLength: dims });

describe('exact vector scan: int8 pre-scan + float re-rank, in process and in workers', () => {
  it('returns the same ids, order, scores and total as a plain exact scan, in this thread and in the workers', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(3, 16, 37, 64),
      fc.integer({ min: 1, max: 200 }),
      fc.integer({ min: 0, max: 12 }),
      fc.constantFrom(-1, 0, 0.2, 0.5),
      fc.boolean(),
      fc.integer({ min: 0, max: 1_000_000 }),
      async (dims, count, k, minCosine, filtered, seed) => {
        const rows = new Map<number, Float32Array>();
        const matrix = new VectorMatrix(dims, 4);
        clustered(seed, count, dims, 3, 0.05).forEach((v, i) => {
          const key = (i * 7919) % 100_003; // keys out of row order, so ties are broken by key, not by position
          rows.set(key, v);
          matrix.upsert(key, v);
        });
        const query = clustered(seed + 1, 1, dims, 1, 0)[0]!;
        const allowed = filtered ? new Set([...rows.keys()].filter((key) => key % 3 !== 0)) : undefined;
        const expected = reference(rows, query, k, minCosine, allowed);
        const here = matrix.search(query, k, minCosine, allowed);
        const there = await matrix.searchIn(pool, query, k, minCosine, allowed);
        expect(here).toEqual(expected);
        expect(there).toEqual(expected);
      },
    ), { numRuns: 60 });
  });

  it('takes `allowed` as any list of keys: repeats and keys it does not hold change nothing', async () => {
    const rows = new Map<number, Float32Array>();
    const matrix = new VectorMatrix(16, 4);
    clustered(7, 120, 16, 3, 0.05).forEach((v, key) => { rows.set(key, v); matrix.upsert(key, v); });
    const query = clustered(8, 1, 16, 1, 0)[0]!;
    const keys = [...rows.keys()].filter((key) => key % 2 === 0);
    // As a store's tag index lists them: a key once per matching tag, and keys of rows in other scopes.
    const listed = [...keys, ...keys.slice(0, 20), 1_000_001, 1_000_002];
    for (const minCosine of [-1, 0.3]) {
      const expected = reference(rows, query, 5, minCosine, new Set(keys));
      expect(matrix.search(query, 5, minCosine, listed)).toEqual(expected);
      expect(await matrix.searchIn(pool, query, 5, minCosine, listed)).toEqual(expected);
    }
  });

  it('stays exact on arbitrary vectors (fast-check floats), including zero and duplicate rows', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(vectorArb(8), { minLength: 1, maxLength: 40 }), vectorArb(8), fc.integer({ min: 1, max: 5 }),
      async (vectors, query, k) => {
        const rows = new Map<number, Float32Array>();
        const matrix = new VectorMatrix(8, 2);
        vectors.forEach((v, key) => { rows.set(key, Float32Array.from(v)); matrix.upsert(key, v); });
        if (query.every((x) => x === 0)) return;
        const expected = reference(rows, query, k, -1.1);
        expect(matrix.search(query, k, -1.1)).toEqual(expected);
        expect(await matrix.searchIn(pool, query, k, -1.1)).toEqual(expected);
      },
    ), { numRuns: 60 });
  });

  // 37: a width that is not a multiple of the refinement's four-wide loop.
  it.each([384, 37])('estimates each row within its bound at %i dims: sharp (both code levels) and coarse (the first level alone, an integer dot product), much wider', (dims) => {
    const matrix = new VectorMatrix(dims);
    const vectors = clustered(5, 300, dims, 8, 0.05);
    vectors.forEach((v, key) => matrix.upsert(key, v));
    const keys = [...vectors.keys(), 10_000];
    const sharpErrors: number[] = [];
    const coarseErrors: number[] = [];
    for (const query of clustered(7, 4, dims, 8, 0.05)) {
      const exact = reference(new Map(vectors.map((v, key) => [key, v])), query, vectors.length, -1.1).hits;
      const sharp = matrix.estimates(query, keys);
      const coarse = matrix.estimates(query, keys, 'coarse');
      // A key the matrix does not hold is left out of both.
      expect([...sharp.keys()].sort((a, b) => a - b)).toEqual(vectors.map((_, key) => key));
      expect([...coarse.keys()].sort((a, b) => a - b)).toEqual(vectors.map((_, key) => key));
      for (const { key, cosine } of exact) {
        expect(Math.abs(sharp.get(key)!.cosine - cosine)).toBeLessThanOrEqual(sharp.get(key)!.error);
        expect(Math.abs(coarse.get(key)!.cosine - cosine)).toBeLessThanOrEqual(coarse.get(key)!.error);
        sharpErrors.push(sharp.get(key)!.error);
        coarseErrors.push(coarse.get(key)!.error);
      }
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    expect(median(sharpErrors)).toBeLessThan(1e-3);
    expect(median(coarseErrors)).toBeGreaterThan(20 * median(sharpErrors));
    expect(median(coarseErrors)).toBeLessThan(0.05);
    // An all-zero query scores every row 0 exactly, at either precision.
    expect([...matrix.estimates(new Float32Array(dims), [0, 1], 'coarse').values()]).toEqual([{ cosine: 0, error: 0 }, { cosine: 0, error: 0 }]);
  });

  it('computes in its SIMD kernel the same int8 dot products as a plain loop over either block layout, at every stride, for dense and sparse queries', () => {
    const memory = new wasm.Memory({ initial: 1024, maximum: MAX_PAGES, shared: true });
    const dots = int8Dots(memory);
    for (const blockRows of [SMALL_BLOCK_ROWS, LARGE_BLOCK_ROWS]) {
      // Every stride in small blocks (16-byte rounds, odd pair counts); two in large ones (same code, longer runs).
      for (const stride of blockRows === SMALL_BLOCK_ROWS ? [16, 48, 64, 80, 128, 512, 1536] : [48, 512]) {
        for (const sparse of [false, true]) {
          const layout = { codesOffset: 65536, stride, blockRows };
          const blocks = blockRows === SMALL_BLOCK_ROWS ? 3 : 2;
          const blockBytes = stride * blockRows;
          const pairsPtr = 0;
          const qPairsPtr = 2 * stride;
          const outPtr = 4 * stride;
          const codes = new Int8Array(memory.buffer);
          const q16 = new Int16Array(stride);
          // Extremes included (|code| and |query| up to 127), so that an overflow or a dropped lane would show.
          for (let i = 0; i < stride; i++) q16[i] = sparse && i % 3 !== 0 ? 0 : i % 5 === 0 ? 127 : ((i * 37) % 255) - 127;
          for (let i = 0; i < blocks * blockBytes; i++) codes[layout.codesOffset + i] = i % 7 === 0 ? -127 : ((i * 91) % 255) - 127;
          const pairs = writeQueryPairs(memory.buffer, q16, pairsPtr, qPairsPtr, blockRows);
          // Only the pairs with a non-zero value are listed (a sparse query reads fewer codes).
          const nonZeroPairs = Array.from({ length: stride / 2 }, (_, p) => q16[2 * p] !== 0 || q16[2 * p + 1] !== 0).filter(Boolean).length;
          expect(pairs).toBe(nonZeroPairs);
          if (sparse) expect(pairs).toBeLessThan(stride / 2);
          dots(layout.codesOffset, pairsPtr, qPairsPtr, pairs, blocks, blockRows, blockBytes, outPtr);
          const out = new Int32Array(memory.buffer, outPtr, blocks * blockRows);
          for (let r = 0; r < blocks * blockRows; r += blockRows === SMALL_BLOCK_ROWS ? 1 : 7) {
            let sum = 0;
            for (let j = 0; j < stride; j++) sum += codes[codeIndex(layout, r, j)]! * q16[j]!;
            expect(out[r], `${blockRows}-row blocks, stride ${stride}, row ${r}`).toBe(sum);
            expect(rowCodesDot(layout, codes, r, q16)).toBe(sum);
          }
        }
      }
    }
    // Small matrices keep small blocks (writing a row touches every page of its block); big ones stream long runs.
    expect(blockRowsFor(100)).toBe(SMALL_BLOCK_ROWS);
    expect(blockRowsFor(100_000)).toBe(LARGE_BLOCK_ROWS);
  });

  it('gives the same dot products for every count of listed pairs: in groups of 8, their tail of 4, its padding, and every pair', () => {
    const memory = new wasm.Memory({ initial: 1024, maximum: MAX_PAGES, shared: true });
    const dots = int8Dots(memory);
    const random = seededRandom(39);
    for (const [blockRows, stride] of [[SMALL_BLOCK_ROWS, 64], [LARGE_BLOCK_ROWS, 48]] as const) {
      const layout = { codesOffset: 65536, stride, blockRows };
      const blocks = 2;
      const blockBytes = stride * blockRows;
      const codes = new Int8Array(memory.buffer);
      for (let i = 0; i < blocks * blockBytes; i++) codes[layout.codesOffset + i] = Math.floor(random() * 255) - 127;
      const pairsPtr = 0;
      const qPairsPtr = 2 * stride;
      const outPtr = 4 * stride;
      // Every count from none to all (stride / 2): full groups of 8, a tail of 1-4 read up to the padding, every pair.
      for (let listed = 0; listed <= stride / 2; listed++) {
        const chosen = new Set<number>();
        while (chosen.size < listed) chosen.add(Math.floor(random() * (stride / 2)));
        const q16 = new Int16Array(stride);
        for (const p of chosen) {
          q16[2 * p] = Math.floor(random() * 255) - 127 || 1;
          q16[2 * p + 1] = random() < 0.3 ? 0 : Math.floor(random() * 255) - 127;
        }
        // What an earlier query left in the lists: a missing zero pad would add a pair's products.
        new Int32Array(memory.buffer, pairsPtr, stride / 2).fill(2 * blockRows);
        new Int32Array(memory.buffer, qPairsPtr, stride / 2).fill(0x00050007);
        const pairs = writeQueryPairs(memory.buffer, q16, pairsPtr, qPairsPtr, blockRows);
        expect(pairs).toBe(listed);
        dots(layout.codesOffset, pairsPtr, qPairsPtr, pairs, blocks, blockRows, blockBytes, outPtr);
        const out = new Int32Array(memory.buffer, outPtr, blocks * blockRows);
        for (let r = 0; r < blocks * blockRows; r += 5) {
          let sum = 0;
          for (let j = 0; j < stride; j++) sum += codes[codeIndex(layout, r, j)]! * q16[j]!;
          expect(out[r], `${blockRows}-row blocks, ${listed} pairs listed, row ${r}`).toBe(sum);
        }
      }
    }
  });

  it('answers as a plain exact scan in large blocks too: sparse and dense queries, deletions moving rows, in workers and not', async () => {
    const dims = 40;
    const rows = new Map<number, Float32Array>();
    // Sparse rows (a third of the dims zero) with duplicates, as the hashing embedder makes them.
    clustered(17, 9000, dims, 8, 0.3).forEach((v, key) => rows.set(key, Float32Array.from(v, (x, i) => ((key + i) % 3 === 0 ? 0 : x))));
    // Laid out in large blocks from the start, and grown into them from small ones (re-laid out on the way).
    const sized = new VectorMatrix(dims, 9000);
    const grown = new VectorMatrix(dims);
    expect(grown.buffers().blockRows).toBe(SMALL_BLOCK_ROWS);
    for (const matrix of [sized, grown]) for (const [key, v] of rows) matrix.upsert(key, v);
    for (const matrix of [sized, grown]) expect(matrix.buffers().blockRows).toBe(LARGE_BLOCK_ROWS);
    // Deletion swaps the last row into the hole, across blocks.
    for (let key = 0; key < 9000; key += 97) {
      for (const matrix of [sized, grown]) matrix.remove(key);
      rows.delete(key);
    }
    for (const matrix of [sized, grown]) matrix.upsert(4, rows.get(5)!);
    rows.set(4, rows.get(5)!);
    const queries = [...rows.values()].slice(0, 4).map((v, i) => Float32Array.from(v, (x, j) => (i % 2 === 0 && j % 4 !== 0 ? 0 : x + 0.1)));
    for (const [i, query] of queries.entries()) {
      for (const minCosine of [-1, 0.5]) {
        const limit = [10, 1, 30][i % 3]!;
        const want = reference(rows, query, limit, minCosine);
        for (const matrix of [sized, grown]) {
          expect(matrix.search(query, limit, minCosine)).toEqual(want);
          expect(await matrix.searchIn(pool, query, limit, minCosine)).toEqual(want);
        }
      }
    }
  });

  it('splits a search into one part per thread when big enough, and leaves a busy caller a core below a size', async () => {
    // Products (rows × dims) per part: at least 1 << 20; a caller busy beside the scan keeps a core below 1 << 23.
    expect(pool.partsFor(1000, 512)).toBe(1);
    expect(pool.partsFor(10_000, 512)).toBe(2);
    expect(pool.partsFor(10_000, 512, true)).toBe(1);
    expect(pool.partsFor(16_383, 512, true)).toBe(1);
    expect(pool.partsFor(16_384, 512, true)).toBe(2);
    expect(pool.partsFor(100_000, 512, true)).toBe(2);
    const four = new ScanPool({ threads: 4, inlineBelow: 0 });
    try {
      expect(four.partsFor(10_000, 512)).toBe(4);
      expect(four.partsFor(10_000, 512, true)).toBe(3);
      expect(four.partsFor(2_500, 512, true)).toBe(1);
      expect(four.partsFor(100_000, 512, true)).toBe(4);
    } finally {
      await four.close();
    }
  });

  it('finds the exact top 10 (recall@10 = 1.0) on a clustered set big enough to be split across the workers', async () => {
    const dims = 384;
    const rows = new Map<number, Float32Array>();
    const matrix = new VectorMatrix(dims);
    clustered(11, 6000, dims, 40, 0.02).forEach((v, key) => { rows.set(key, v); matrix.upsert(key, v); });
    expect(pool.partsFor(matrix.size, dims)).toBe(2);
    for (const [i, query] of clustered(99, 8, dims, 40, 0.02).entries()) {
      const threshold = [-1, 0.3, 0.9][i % 3]!;
      const expected = reference(rows, query, 10, threshold);
      expect(await matrix.searchIn(pool, query, 10, threshold)).toEqual(expected);
      // Hybrid search's candidate pool (50): the rows refined first are the most promising, not the first scanned.
      expect(await matrix.searchIn(pool, query, 50, threshold)).toEqual(reference(rows, query, 50, threshold));
      // A caller busy meanwhile (hybrid search): one part, the same answer.
      const before = pool.stats.prescansReturned;
      expect(await matrix.searchIn(pool, query, 10, threshold, null, { callerBusy: true })).toEqual(expected);
      expect(pool.stats.prescansReturned - before).toBe(1);
    }
  });

  it('keeps every row still open for the top k when there are more than a scan starts with room for (equal rows)', async () => {
    // Equal rows never drop below the k-th best lower bound: all 10,000 stay open for pass 2 in one part (the scratch
    // starts with room for 4,096 and grows), and ties are broken by ascending key. The scratch is per thread and kept:
    // a new pool's one thread starts from none, whatever earlier tests grew elsewhere.
    const dims = 16;
    const rows = new Map<number, Float32Array>();
    const matrix = new VectorMatrix(dims);
    const row = Float32Array.from({ length: dims }, (_, i) => Math.cos(i));
    for (let key = 0; key < 10_000; key++) { rows.set(key, row); matrix.upsert(key, row); }
    const query = Float32Array.from({ length: dims }, (_, i) => Math.sin(i + 1));
    const expected = reference(rows, query, 10, -1);
    expect(expected.hits.map((h) => h.key)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const fresh = new ScanPool({ threads: 1, inlineBelow: 0 });
    try {
      expect(await matrix.searchIn(fresh, query, 10, -1)).toEqual(expected);
    } finally {
      await fresh.close();
    }
    expect(matrix.search(query, 10, -1)).toEqual(expected);
  });

  it('applies writes that arrive during worker scans before the next search, and never mid-scan', async () => {
    const dims = 64;
    const matrix = new VectorMatrix(dims);
    const rows = new Map<number, Float32Array>();
    clustered(5, 3000, dims, 5, 0.1).forEach((v, key) => { rows.set(key, v); matrix.upsert(key, v); });
    const query = clustered(6, 1, dims, 1, 0)[0]!;
    const inFlight = matrix.searchIn(pool, query, 5, -1);
    // While the scan runs: the best row is removed, and a copy of the query is added.
    const best = reference(rows, query, 1, -1).hits[0]!.key;
    matrix.remove(best);
    matrix.upsert(999_999, query);
    const before = await inFlight;
    expect(before).toEqual(reference(rows, query, 5, -1));
    rows.delete(best);
    rows.set(999_999, query);
    const after = await matrix.searchIn(pool, query, 5, -1);
    expect(after).toEqual(reference(rows, query, 5, -1));
    expect(after.hits[0]!.key).toBe(999_999);
  });

  it('has the workers let go of the buffers a matrix grew out of, and answers the same after each growth', async () => {
    const own = new ScanPool({ threads: 2, inlineBelow: 0 });
    const dims = 32;
    const matrix = new VectorMatrix(dims, 16);
    const rows = new Map<number, Float32Array>();
    const all = clustered(9, 400, dims, 4, 0.2);
    const query = all[7]!;
    let retired = own.stats.retired;
    let bytes = -1;
    let growths = 0;
    for (const [i, v] of all.entries()) {
      rows.set(i, v);
      matrix.upsert(i, v);
      if (i % 50 !== 49) continue;
      // Capacity 16, growing by half: some of these searches follow a reallocation (the matrix's bytes grew), others not.
      expect(await matrix.searchIn(own, query, 5, -1)).toEqual(reference(rows, query, 5, -1));
      const grew = bytes >= 0 && matrix.bytes !== bytes;
      if (grew) growths++;
      expect(own.stats.retired, `after row ${i}`).toBe(retired + (grew ? 1 : 0));
      retired = own.stats.retired;
      bytes = matrix.bytes;
    }
    expect(growths).toBeGreaterThanOrEqual(3);
    // No growth since the last search: nothing to let go of.
    await matrix.searchIn(own, query, 5, -1);
    expect(own.stats.retired).toBe(retired);
    await own.close();
  });

  it('finishes the part of a worker that dies mid-scan in this thread, replaces the worker, and closes cleanly', async () => {
    const own = new ScanPool({ threads: 2, inlineBelow: 0 });
    const dims = 64;
    const matrix = new VectorMatrix(dims);
    const rows = new Map<number, Float32Array>();
    clustered(8, 40_000, dims, 9, 0.1).forEach((v, key) => { rows.set(key, v); matrix.upsert(key, v); });
    const query = clustered(9, 1, dims, 1, 0)[0]!;
    const expected = reference(rows, query, 10, -1);
    await matrix.searchIn(own, query, 10, -1); // workers started
    const [first] = own.workerThreadIds();
    const searching = matrix.searchIn(own, query, 10, -1);
    await own.crashWorker(0);
    expect(await searching).toEqual(expected);
    expect(own.workerThreadIds()[0]).not.toBe(first);
    expect(await matrix.searchIn(own, query, 10, -1)).toEqual(expected);
    await own.close();
    expect(own.workerThreadIds().length).toBe(2);
    await expect(matrix.searchIn(own, query, 10, -1)).rejects.toThrow(/closed/);
  });

  it.runIf(process.platform === 'linux')('runs its workers below the event loop\'s priority, and leaves the event loop\'s alone', async () => {
    const nice = (tid: string) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const before = nice(String(process.pid));
    const own = new ScanPool({ threads: 2, inlineBelow: 0 });
    try {
      const matrix = new VectorMatrix(16);
      for (let key = 0; key < 100; key++) matrix.upsert(key, Float32Array.from({ length: 16 }, (_, i) => Math.sin(key + i)));
      await matrix.searchIn(own, Float32Array.from({ length: 16 }, (_, i) => i), 3, -1); // both workers started and ran
      await matrix.searchIn(own, Float32Array.from({ length: 16 }, (_, i) => -i), 3, -1);
      // The event loop's thread kept the priority it had before the pool started.
      const own0 = nice(String(process.pid));
      expect(own0).toBe(before);
      expect(own0).toBe(getPriority(0));
      const lowered = readdirSync('/proc/self/task').filter((tid) => nice(tid) === Math.min(19, own0 + BACKGROUND_NICE_STEP));
      expect(lowered.length).toBeGreaterThanOrEqual(2);
    } finally {
      await own.close();
    }
  });

  it('writes a row in two passes with the codes, scale and error the four-pass quantisation gives the unit row the re-rank scores', () => {
    const dims = 100;
    const layout = layoutFor(dims, SMALL_BLOCK_ROWS);
    const rows = allocateRows(layout, 1);
    const views = viewsOf(rows);
    fc.assert(fc.property(
      fc.array(fc.oneof(fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), fc.constant(0)), { minLength: dims, maxLength: dims }),
      (values) => {
        const vector = Float32Array.from(values);
        writeRow(layout, views, 0, 7, vector);
        // The stored float32 row is the normalised vector; quantizeInto on it is the reference.
        let sq = 0;
        for (const x of vector) sq += x * x;
        const inv = sq > 0 ? 1 / Math.sqrt(sq) : 0;
        const stored = Float32Array.from(vector, (x) => x * inv);
        // The re-rank's unit row is that same row.
        const unit = new Float32Array(dims);
        unitRowInto(vector, dims, unit);
        expect([...unit]).toEqual([...stored]);
        const codes = new Int8Array(layout.stride);
        const [scale, error] = quantizeInto(stored, 0, dims, codes, 0);
        expect(Array.from({ length: layout.stride }, (_, d) => views.codes[codeIndex(layout, 0, d)])).toEqual([...codes]);
        expect(views.scales[0]).toBe(Math.fround(scale));
        expect(views.errors[0]).toBe(error);
        expect(views.keys[0]).toBe(7);
      }), { numRuns: 300 });
  });
});
