import { VectorMatrix } from '../../src/adapters/storage/vector-matrix.ts';
import { forceGc, liveBytes } from '../lib/gc.ts';
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
}

export interface ScanCase {
  rows: number;
  dims: number;
  queries: number;
  matrixMs: number[];
  plainMs: number[];
  /** Per-query matrix/plain time: a ratio of two scans measured back to back. */
  ratios: number[];
  matrixMiB: number;
  floatsMiB: number;
  fillSeconds: number;
}

const DATA_SEED = 0xda7a;
const QUERY_SEED = 0x0e1e;
const MIB = 1024 * 1024;

export function runScanSuite(o: ScanSuiteOptions): ScanCase[] {
  const cases: ScanCase[] = [];
  for (const rows of o.sizes) {
    for (const dims of o.dims) {
      cases.push(runCase(rows, dims, o));
      forceGc(); // the previous case's arrays must be gone before the next one allocates
    }
  }
  return cases;
}

function runCase(rows: number, dims: number, o: ScanSuiteOptions): ScanCase {
  const name = `scan ${compactCount(rows)} x ${dims}`;
  log(`\n== ${name} ==`);
  const t0 = performance.now();

  const before = liveBytes();
  let matrix: VectorMatrix | null = new VectorMatrix(dims, rows);
  const fillBar = phase(`${name}: fill matrix`, rows, 'rows');
  forEachRandomVector(DATA_SEED, rows, dims, (row, v) => {
    matrix!.upsert(row, v);
    if ((row & 1023) === 1023) fillBar.update(row + 1);
  });
  fillBar.update(rows);
  fillBar.stop();
  const matrixMiB = (liveBytes() - before) / MIB;

  let plain: Float32Array | null = new Float32Array(rows * dims);
  const plainBar = phase(`${name}: fill plain array`, rows, 'rows');
  forEachRandomVector(DATA_SEED, rows, dims, (row, v) => {
    normaliseInto(v, plain!, row * dims);
    if ((row & 1023) === 1023) plainBar.update(row + 1);
  });
  plainBar.update(rows);
  plainBar.stop();
  const fillSeconds = (performance.now() - t0) / 1000;

  const queries: Float32Array[] = [];
  forEachRandomVector(QUERY_SEED, o.warmupQueries + o.queries, dims, (_row, v) => queries.push(v.slice()));

  const matrixMs: number[] = [];
  const plainMs: number[] = [];
  const ratios: number[] = [];
  const bar = phase(`${name}: queries`, queries.length, 'queries');
  queries.forEach((q, i) => {
    // Alternate which runs first, so that neither always inherits a warm cache or pays for a GC the other caused.
    const matrixFirst = i % 2 === 0;
    let m = 0;
    let p = 0;
    let mHits: ReturnType<VectorMatrix['search']> | undefined;
    let pHits: ReturnType<typeof plainTopK> | undefined;
    const runMatrix = () => { const s = performance.now(); mHits = matrix!.search(q, o.k, -1); m = performance.now() - s; };
    const runPlain = () => { const s = performance.now(); pHits = plainTopK(plain!, rows, dims, q, o.k); p = performance.now() - s; };
    if (matrixFirst) { runMatrix(); runPlain(); } else { runPlain(); runMatrix(); }
    verifySame(name, i, mHits!, pHits!, rows, o.k);
    if (i >= o.warmupQueries) {
      matrixMs.push(m);
      plainMs.push(p);
      ratios.push(m / p);
    }
    bar.increment();
  });
  bar.stop();

  matrix = null;
  plain = null;
  return {
    rows, dims, queries: o.queries, matrixMs, plainMs, ratios, matrixMiB, floatsMiB: (rows * dims * 4) / MIB, fillSeconds,
  };
}

/** Keys are row numbers here, so the two top-k lists must agree id for id, in order; `total` must be every row. */
function verifySame(name: string, query: number, m: ReturnType<VectorMatrix['search']>, p: ReturnType<typeof plainTopK>, rows: number, k: number): void {
  const expected = Math.min(k, rows);
  const mIds = m.hits.map((h) => h.key);
  const pIds = Array.from(p.rows.subarray(0, p.count));
  const same = mIds.length === expected && pIds.length === expected && mIds.every((id, i) => id === pIds[i]);
  if (!same || m.total !== rows) {
    throw new Error(`${name}, query ${query}: top-${k} differ or total wrong.\n  matrix: ${mIds.join(',')} (total ${m.total})\n` +
      `  plain:  ${pIds.join(',')}\n  matrix scores: ${m.hits.map((h) => h.cosine).join(',')}\n` +
      `  plain scores:  ${Array.from(p.scores.subarray(0, p.count)).join(',')}`);
  }
}

export function scanTable(cases: readonly ScanCase[], o: ScanSuiteOptions): string {
  const rows = cases.map((c) => [
    compactCount(c.rows), String(c.dims),
    fmt(median(c.matrixMs)), fmt(percentile(c.matrixMs, 99)),
    fmt(median(c.plainMs)), fmt(percentile(c.plainMs, 99)),
    `${median(c.ratios).toFixed(2)}×`,
    fmt(c.matrixMiB, 1), fmt(c.floatsMiB, 1),
  ]);
  return [
    `Top-${o.k} exact search, no threshold (\`matrix.search(q, ${o.k}, -1)\`, every row scored), over uniformly random ` +
      `vectors; ${o.queries} random queries per case after ${o.warmupQueries} warm-up queries, matrix and plain loop ` +
      'run back to back on each query (alternating which goes first); with so few queries p99 is in effect the slowest one. The ratio is the median of the per-query ratios ' +
      'matrix/plain (> 1 = matrix slower). Both returned the same top-k ids, in the same order, for every query. ' +
      '"matrix MiB" is the live heap + ArrayBuffer growth after filling the matrix, measured after a full GC.',
    '',
    table(
      ['rows', 'dims', 'matrix p50 ms', 'matrix p99 ms', 'plain p50 ms', 'plain p99 ms', 'matrix/plain', 'matrix MiB', 'raw floats MiB'],
      rows,
      'rrrrrrrrr',
    ),
  ].join('\n');
}
