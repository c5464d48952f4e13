import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { ScanPool } from '../../src/adapters/storage/sqlite/vector-scan/scan-pool.ts';
import { forceGc } from '../lib/gc.ts';
import { loadAverage } from '../lib/machine.ts';
import { table } from '../lib/markdown.ts';
import { log, phase } from '../lib/progress.ts';
import { compactCount, fmt, median, percentile } from '../lib/stats.ts';
import { normaliseInto, plainTopK } from './baseline.ts';
import { forEachRandomVector } from './vectors.ts';

export interface ScanSuiteOptions {
  sizes: number[];
  dims: number[];
  queries: number;
  warmupQueries: number;
  k: number;
  /** Scan worker threads for the pooled search (MNEMO_SEARCH_THREADS's default: the cores available). */
  threads: number;
  /** Concurrent searches for the throughput figure. */
  concurrency: number;
}

export interface ScanCase {
  rows: number;
  dims: number;
  queries: number;
  /** Mnemo's search in the worker pool (int8 pre-scan + exact re-rank), awaited one at a time. */
  pooledMs: number[];
  /** The same search in this thread. */
  inlineMs: number[];
  /** A plain single-thread exact scan in JavaScript (float64 dot products of every row: the scan before this one). */
  plainMs: number[];
  /** sqlite-vec 0.1.9 `vec0` exact KNN (brute force, cosine) on the same vectors, in process through better-sqlite3. */
  vecMs: number[];
  /** Per-query pooled / sqlite-vec time. */
  ratios: number[];
  /** Searches per second with `concurrency` searches in flight in the pool, and of the plain scan one after another. */
  pooledQps: number;
  plainQps: number;
  matrixMiB: number;
  floatsMiB: number;
  load: number;
  /** Queries whose top-k ids were identical to the plain scan's, in order (pooled and in-thread both checked). */
  identical: number;
  checked: number;
  /** Mean share of the plain scan's top-k that sqlite-vec returned (float32 ties can differ). */
  vecRecall: number;
}

const DATA_SEED = 0xda7a;
const QUERY_SEED = 0x0e1e;
const MIB = 1024 * 1024;

export async function runScanSuite(o: ScanSuiteOptions): Promise<ScanCase[]> {
  const cases: ScanCase[] = [];
  const pool = new ScanPool({ threads: o.threads });
  try {
    for (const rows of o.sizes) {
      for (const dims of o.dims) {
        cases.push(await runCase(rows, dims, o, pool));
        forceGc(); // the previous case's arrays must be gone before the next one allocates
      }
    }
  } finally {
    await pool.close();
  }
  return cases;
}

async function runCase(rows: number, dims: number, o: ScanSuiteOptions, pool: ScanPool): Promise<ScanCase> {
  const name = `scan ${compactCount(rows)} x ${dims}`;
  log(`\n== ${name} ==`);
  let matrix: VectorMatrix | null = new VectorMatrix(dims, rows);
  const vec = new Database(':memory:');
  sqliteVec.load(vec);
  vec.exec(`CREATE VIRTUAL TABLE items USING vec0(embedding float[${dims}] distance_metric=cosine)`);
  const insert = vec.prepare('INSERT INTO items (rowid, embedding) VALUES (?, ?)');
  const fillBar = phase(`${name}: fill matrix and vec0`, rows, 'rows');
  const unit = new Float32Array(dims);
  // The plain scan's unit rows, key = row (the matrix keeps only codes, and its own copies of the vectors given).
  const plain = new Float32Array(rows * dims);
  vec.transaction(() => {
    forEachRandomVector(DATA_SEED, rows, dims, (row, v) => {
      matrix!.upsert(row, v);
      normaliseInto(v, unit);
      plain.set(unit, row * dims);
      insert.run(BigInt(row + 1), Buffer.from(unit.buffer, 0, dims * 4));
      if ((row & 1023) === 1023) fillBar.update(row + 1);
    });
  })();
  fillBar.update(rows);
  fillBar.stop();
  const knn = vec.prepare<[Buffer], { rowid: number; distance: number }>(
    `SELECT rowid, distance FROM items WHERE embedding MATCH ? AND k = ${o.k} ORDER BY distance`);

  const queries: Float32Array[] = [];
  forEachRandomVector(QUERY_SEED, o.warmupQueries + o.queries, dims, (_row, v) => queries.push(v.slice()));

  const pooledMs: number[] = [];
  const inlineMs: number[] = [];
  const plainMs: number[] = [];
  const vecMs: number[] = [];
  const ratios: number[] = [];
  let identical = 0;
  let recallSum = 0;
  const bar = phase(`${name}: queries`, queries.length, 'queries');
  for (const [i, q] of queries.entries()) {
    const m = matrix;
    let pooled!: Awaited<ReturnType<VectorMatrix['searchIn']>>;
    let inline!: ReturnType<VectorMatrix['search']>;
    let reference!: ReturnType<typeof plainTopK>;
    let vecIds: number[] = [];
    const t = { pooled: 0, inline: 0, plain: 0, vec: 0 };
    const steps: (() => Promise<void> | void)[] = [
      async () => { const s = performance.now(); pooled = await m.searchIn(pool, q, o.k, -1); t.pooled = performance.now() - s; },
      () => { const s = performance.now(); inline = m.search(q, o.k, -1); t.inline = performance.now() - s; },
      () => { const s = performance.now(); reference = plainTopK(plain, rows, dims, q, o.k); t.plain = performance.now() - s; },
      () => {
        const s = performance.now();
        vecIds = knn.all(Buffer.from(q.buffer, q.byteOffset, dims * 4)).map((r) => Number(r.rowid) - 1);
        t.vec = performance.now() - s;
      },
    ];
    // Rotate which goes first, so that none always inherits a warm cache or pays for a GC another caused.
    for (let s = 0; s < steps.length; s++) await steps[(s + i) % steps.length]!();
    const refIds = Array.from(reference.rows.subarray(0, reference.count));
    const same = (hits: { key: number; cosine: number }[], label: string) => {
      if (hits.length !== refIds.length) throw new Error(`${name}, query ${i}: ${label} returned ${hits.length} hits`);
      hits.forEach((h, r) => {
        if (Math.abs(h.cosine - reference.scores[r]!) > 1e-6) {
          throw new Error(`${name}, query ${i}: ${label} score at rank ${r} is ${h.cosine}, the plain scan's ${reference.scores[r]}`);
        }
      });
      return hits.every((h, r) => h.key === refIds[r]);
    };
    if (pooled.total !== rows || inline.total !== rows) throw new Error(`${name}, query ${i}: total is not every row`);
    if (same(pooled.hits, 'pooled') && same(inline.hits, 'in-thread')) identical++;
    recallSum += vecIds.filter((id) => refIds.includes(id)).length / refIds.length;
    if (i >= o.warmupQueries) {
      pooledMs.push(t.pooled);
      inlineMs.push(t.inline);
      plainMs.push(t.plain);
      vecMs.push(t.vec);
      ratios.push(t.pooled / t.vec);
    }
    bar.increment();
  }
  bar.stop();

  // Throughput: `concurrency` searches in flight over the measured queries, against the plain scan's sequential rate.
  const measured = queries.slice(o.warmupQueries);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: o.concurrency }, async () => {
    while (next < measured.length) await matrix!.searchIn(pool, measured[next++]!, o.k, -1);
  }));
  const pooledQps = measured.length / ((performance.now() - t0) / 1000);
  const plainQps = 1000 / (plainMs.reduce((a, b) => a + b, 0) / plainMs.length);

  const matrixMiB = matrix.bytes / MIB;
  matrix = null;
  vec.close();
  return {
    rows, dims, queries: o.queries, pooledMs, inlineMs, plainMs, vecMs, ratios, pooledQps, plainQps, matrixMiB,
    floatsMiB: (rows * dims * 4) / MIB, load: loadAverage(), identical, checked: queries.length, vecRecall: recallSum / queries.length,
  };
}

export function scanTable(cases: readonly ScanCase[], o: ScanSuiteOptions): string {
  const rows = cases.map((c) => [
    compactCount(c.rows), String(c.dims),
    fmt(median(c.pooledMs)), fmt(percentile(c.pooledMs, 99)), fmt(median(c.inlineMs)), fmt(median(c.plainMs)), fmt(median(c.vecMs)),
    `${median(c.ratios).toFixed(2)}×`, fmt(c.pooledQps, 1), fmt(c.plainQps, 1), `${(c.pooledQps / c.plainQps).toFixed(2)}×`,
    `${(c.matrixMiB / c.floatsMiB).toFixed(2)}×`, `${c.identical}/${c.checked}`, c.vecRecall.toFixed(3), c.load.toFixed(1),
  ]);
  return [
    `Top-${o.k} exact search, no threshold (every row scored and counted), over uniformly random vectors, in process; ` +
      `${o.queries} random queries per case after ${o.warmupQueries} warm-up queries. Per query, run back to back in a rotating ` +
      `order: Mnemo's search in its ${o.threads} scan worker thread(s) ("pooled": int8 SIMD pre-scan of every row, exact float ` +
      're-rank of the rows whose error bound can reach the top-k), the same search in the calling thread ("1 thread"), a plain ' +
      'single-thread JavaScript exact scan (float64 dot products of every row: how Mnemo scanned before), and sqlite-vec 0.1.9 ' +
      '`vec0` exact KNN (`distance_metric=cosine`, brute force) on the same unit vectors. "pooled / vec0" is the median of the ' +
      `per-query ratios. Throughput: ${o.concurrency} searches in flight in the pool over the measured queries, against the plain ` +
      'scan one query after another. Every query is checked: Mnemo\'s ids (pooled and 1 thread) must have the plain scan\'s ' +
      'scores rank by rank (within 1e-6), and `total` must be every row; "same top-k" counts queries whose id lists were ' +
      'identical (a swap of float-tied ids is the only difference tolerated). "vec0 recall" is the share of the plain top-k ' +
      'that sqlite-vec returned. "memory" is what the matrix holds (float32 + int8 + per-row key, scale, bound) over the raw ' +
      'float32 bytes. "load avg": the 1-minute load average after the case.',
    '',
    table(
      ['rows', 'dims', 'pooled p50 ms', 'pooled p99 ms', '1 thread p50 ms', 'plain JS p50 ms', 'vec0 p50 ms', 'pooled / vec0',
        `${o.concurrency} in flight /s`, 'plain /s', 'throughput ratio', 'memory / raw', 'same top-k', 'vec0 recall', 'load avg'],
      rows,
      'rrrrrrrrrrrrrrr',
    ),
  ].join('\n');
}
