import { VectorMatrix } from '../../src/adapters/storage/vector-matrix.ts';
import { forceGc, liveBytes } from '../lib/gc.ts';
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
  /** 1-minute load average right after the queries. */
  load: number;
  /** Queries (warm-up included) whose top-k ids were identical, in order, in both; the rest were near-tie swaps. */
  identical: number;
  checked: number;
  /** Largest |matrix score - plain score| at the same rank. */
  maxScoreDiff: number;
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
  let identical = 0;
  let maxScoreDiff = 0;
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
    const check = verifySame(name, i, q, mHits!, pHits!, plain!, rows, dims, o.k);
    if (check.identical) identical++;
    maxScoreDiff = Math.max(maxScoreDiff, check.maxScoreDiff);
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
    load: loadAverage(), identical, checked: queries.length, maxScoreDiff,
  };
}

/** Score differences up to this are float rounding: the matrix may sum in another order than the plain loop. */
const SCORE_EPSILON = 1e-6;

/**
 * Keys are row numbers here, so the two top-k lists must agree id for id, in order, and `total` must be every row.
 * The one allowed difference is a swap of ids whose scores tie within SCORE_EPSILON (summation order can break such a
 * tie either way): so the scores must match rank by rank, and every id the matrix returns must really have the score
 * it reports (recomputed from the plain array). Anything else throws. Returns whether the id lists were identical
 * and the largest score difference seen.
 */
function verifySame(
  name: string, query: number, rawQuery: Float32Array, m: ReturnType<VectorMatrix['search']>, p: ReturnType<typeof plainTopK>,
  plain: Float32Array, rows: number, dims: number, k: number,
): { identical: boolean; maxScoreDiff: number } {
  const expected = Math.min(k, rows);
  const mIds = m.hits.map((h) => h.key);
  const pIds = Array.from(p.rows.subarray(0, p.count));
  const q = new Float32Array(dims);
  normaliseInto(rawQuery, q);
  let maxScoreDiff = 0;
  let ok = mIds.length === expected && pIds.length === expected && m.total === rows;
  for (let i = 0; ok && i < expected; i++) {
    const hit = m.hits[i]!;
    let own = 0;
    for (let d = 0; d < dims; d++) own += plain[hit.key * dims + d]! * q[d]!;
    const diff = Math.max(Math.abs(hit.cosine - p.scores[i]!), Math.abs(hit.cosine - own));
    maxScoreDiff = Math.max(maxScoreDiff, diff);
    if (diff > SCORE_EPSILON) ok = false;
  }
  if (ok && new Set(mIds).size !== expected) ok = false;
  if (!ok) {
    throw new Error(`${name}, query ${query}: top-${k} differ or total wrong.\n  matrix: ${mIds.join(',')} (total ${m.total})\n` +
      `  plain:  ${pIds.join(',')}\n  matrix scores: ${m.hits.map((h) => h.cosine).join(',')}\n` +
      `  plain scores:  ${Array.from(p.scores.subarray(0, p.count)).join(',')}`);
  }
  return { identical: mIds.every((id, i) => id === pIds[i]), maxScoreDiff };
}

export function scanTable(cases: readonly ScanCase[], o: ScanSuiteOptions): string {
  const rows = cases.map((c) => [
    compactCount(c.rows), String(c.dims),
    fmt(median(c.matrixMs)), fmt(percentile(c.matrixMs, 99)),
    fmt(median(c.plainMs)), fmt(percentile(c.plainMs, 99)),
    `${median(c.ratios).toFixed(2)}×`,
    fmt(c.matrixMiB, 1), fmt(c.floatsMiB, 1), `${c.identical}/${c.checked}`, c.maxScoreDiff.toExponential(0), c.load.toFixed(1),
  ]);
  return [
    `Top-${o.k} exact search, no threshold (\`matrix.search(q, ${o.k}, -1)\`, every row scored), over uniformly random ` +
      `vectors; ${o.queries} random queries per case after ${o.warmupQueries} warm-up queries, matrix and plain loop ` +
      'run back to back on each query (alternating which goes first); with so few queries p99 is in effect the slowest one. The ratio is the median of the per-query ratios ' +
      'matrix/plain (> 1 = matrix slower). Every query (warm-up included) is checked: the top-k ids must be the same, in ' +
      'the same order, with scores equal rank by rank within 1e-6 and each returned score equal to the recomputed one ' +
      '("same top-k" counts queries with identical id lists; a swap of ids whose scores tie within 1e-6 is the only ' +
      'difference tolerated, anything else aborts the run; "max Δscore" is the largest score difference seen). ' +
      '"matrix MiB" is the live heap + ArrayBuffer growth after filling the matrix, measured after a full GC. ' +
      '"load avg" is the 1-minute load average after the queries (this suite itself keeps about 1 CPU busy).',
    '',
    table(
      ['rows', 'dims', 'matrix p50 ms', 'matrix p99 ms', 'plain p50 ms', 'plain p99 ms', 'matrix/plain', 'matrix MiB', 'raw floats MiB', 'same top-k', 'max Δscore', 'load avg'],
      rows,
      'rrrrrrrrrrrr',
    ),
  ].join('\n');
}
