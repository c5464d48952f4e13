import type { SharedMemory } from './wasm.ts';
import { claimedChunks, type ChunkShare } from './chunk-claims.ts';
import { better } from './exact-score.ts';
import { PAD_TO, type DotsFn } from './int8-dot-kernel.ts';
import { errorBound, residualErrorBound } from './quantize.ts';
import type { Prescan } from './rerank.ts';
import { codeIndex } from './matrix-storage.ts';

/**
 * The shared memory of one VectorMatrix, as handed to a scan (in this thread or in a worker). `memory` holds the int8
 * codes (from `codesOffset`, in blocks of `blockRows` rows, `blockBytes` each: matrix-storage.ts) after one scratch
 * slot per scanning thread (`slotBytes` each: the query's non-zero dimension pairs and their values, then the
 * kernel's int32 output for one chunk); the other buffers hold, per row, the key, the code scale and the
 * quantisation error.
 */
export interface MatrixBuffers {
  memory: SharedMemory;
  keys: SharedArrayBuffer;
  scales: SharedArrayBuffer;
  errors: SharedArrayBuffer;
  residuals: SharedArrayBuffer;
  residualScales: SharedArrayBuffer;
  residualErrors: SharedArrayBuffer;
  dims: number;
  stride: number;
  blockRows: number;
  blockBytes: number;
  slotBytes: number;
  codesOffset: number;
}

/**
 * One scan of rows [start, end) for one query, in scratch slot `slot`; with `share`, of the chunks of those rows this
 * part claims (chunk-claims.ts: the parts of one search share the range).
 */
export interface PartJob {
  buffers: MatrixBuffers;
  slot: number;
  start: number;
  end: number;
  share?: ChunkShare | null;
  /** The unit query (float32; the refinement's), its int16-widened codes, their scale and the quantisation error ‖f‖. */
  query: Float32Array;
  q16: Int16Array;
  qScale: number;
  qError: number;
  k: number;
  minCosine: number;
  /** When set, only rows whose byte is 1 take part (a SQL prefilter's result), indexed by row. */
  mask: Uint8Array | null;
}

/** An exact top-k (best first, ties by ascending key) and the exact count of rows >= minCosine. */
export interface PartResult {
  keys: number[];
  scores: number[];
  total: number;
}

/** Rows per kernel call (whole blocks: both block sizes divide it): the int32 output of one chunk lives in the scratch slot. */
export const CHUNK_ROWS = 1024;

/** A scan's scratch: the query's pair offsets and packed values (an int32 each, stride / 2 at most), one chunk's dots. */
export const slotBytesFor = (stride: number): number => 4 * stride + 4 * CHUNK_ROWS;

/**
 * Writes the dimension pairs of `q16` that are not both zero into the slot at `pairsPtr` (the pair's byte offset in
 * a block, int32) and `qPairsPtr` (its two values packed, the even dimension low), and returns how many: the pairs the
 * kernel reads (int8-dot-kernel.ts). A zero pair adds nothing to any dot product, so the result is the same. Zero
 * entries follow up to a multiple of PAD_TO, which the kernel's grouped loop reads (room: stride / 2 entries, a
 * multiple of 8).
 */
export function writeQueryPairs(memory: ArrayBufferLike, q16: Int16Array, pairsPtr: number, qPairsPtr: number, blockRows: number): number {
  const pairs = new Int32Array(memory, pairsPtr, q16.length >> 1);
  const values = new Int32Array(memory, qPairsPtr, q16.length >> 1);
  let n = 0;
  for (let p = 0; p < q16.length >> 1; p++) {
    const even = q16[2 * p]!;
    const odd = q16[2 * p + 1]!;
    if (even === 0 && odd === 0) continue;
    pairs[n] = p * 2 * blockRows;
    values[n] = (even & 0xffff) | (odd << 16);
    n++;
  }
  for (let pad = n; pad % PAD_TO !== 0; pad++) {
    pairs[pad] = 0;
    values[pad] = 0;
  }
  return n;
}

/** The chunks of CHUNK_ROWS rows that `rows` rows make (the last one may be short). */
export const chunksIn = (rows: number): number => Math.ceil(rows / CHUNK_ROWS);

/** A matrix's two levels of codes, as refinedScore reads them. */
export interface CodeLevels {
  codes: Int8Array;
  codesOffset: number;
  stride: number;
  blockRows: number;
  scales: Float32Array;
  residuals: Int8Array;
  residualScales: Float32Array;
  dims: number;
}

/**
 * The dimensions where `query` is not zero, when they are fewer than three quarters of them (refinedScore then reads
 * only those); else null.
 */
export function sparseDims(query: Float32Array): Int32Array | null {
  let n = 0;
  for (let i = 0; i < query.length; i++) if (query[i] !== 0) n++;
  if (4 * n >= 3 * query.length) return null;
  const out = new Int32Array(n);
  for (let i = 0, j = 0; i < query.length; i++) if (query[i] !== 0) out[j++] = i;
  return out;
}

/**
 * The refined score of `row`: s·c + s2·c2 (both levels of its codes) dotted with the float unit query. The exact
 * cosine lies within residualErrorBound(the row's residual error) of it (quantize.ts).
 *
 * Computed as s·(c·q) + s2·(c2·q), two accumulators a level: an int8 code times a float32 is exact in float64, so
 * only the sums round (far below the bound's ABS_SLACK), and the loop does half the multiplies of the dequantised
 * form with independent additions (faster a row, which counts because hybrid search refines its keyword candidates on
 * the event loop).
 */
export function refinedScore(m: CodeLevels, row: number, query: Float32Array, nonZero: Int32Array | null = null): number {
  const { codes, residuals, dims } = m;
  // The row's codes: dims 2p and 2p + 1 adjacent, pairs 2 × blockRows bytes apart (matrix-storage.ts).
  const cb = codeIndex(m, row, 0);
  const pairBytes = 2 * m.blockRows;
  const rb = row * dims;
  if (nonZero) {
    // A zero dimension of the query adds an exact zero: only the others are read (a pair's codes are a cache line
    // apart from the next pair's, so a sparse query reads a few lines of the row instead of all of them).
    let c = 0;
    let r = 0;
    for (let j = 0; j < nonZero.length; j++) {
      const i = nonZero[j]!;
      const q = query[i]!;
      c += codes[cb + (i >> 1) * pairBytes + (i & 1)]! * q;
      r += residuals[rb + i]! * q;
    }
    return m.scales[row]! * c + m.residualScales[row]! * r;
  }
  const body = dims - (dims % 4);
  let c0 = 0;
  let c1 = 0;
  let r0 = 0;
  let r1 = 0;
  for (let i = 0, at = cb; i < body; i += 4, at += 2 * pairBytes) {
    const q0 = query[i]!;
    const q1 = query[i + 1]!;
    const q2 = query[i + 2]!;
    const q3 = query[i + 3]!;
    c0 += codes[at]! * q0 + codes[at + pairBytes]! * q2;
    c1 += codes[at + 1]! * q1 + codes[at + pairBytes + 1]! * q3;
    r0 += residuals[rb + i]! * q0 + residuals[rb + i + 2]! * q2;
    r1 += residuals[rb + i + 1]! * q1 + residuals[rb + i + 3]! * q3;
  }
  for (let i = body; i < dims; i++) {
    c0 += codes[cb + (i >> 1) * pairBytes + (i & 1)]! * query[i]!;
    r0 += residuals[rb + i]! * query[i]!;
  }
  return m.scales[row]! * (c0 + c1) + m.residualScales[row]! * (r0 + r1);
}

/**
 * Pre-scans rows [start, end) with the int8 kernel and decides what it can without the float vectors. A row the
 * first level cannot decide (its interval straddles the threshold, or it may belong in the top k) is refined here:
 * its two code levels dequantised, s·c + s2·c2, dotted with the float query leave only the second level's error,
 * |e2·q| ≤ ‖e2‖, about 1/100 of the first interval. Counts the rows certainly at or above the threshold, and returns
 * (by key, with their refined intervals) the rows still undecided: those straddling the threshold, and the
 * candidates whose upper bound reaches the part's k-th best lower bound. rerank.ts scores those exactly. Two
 * passes: the first decides the threshold and keeps the rows whose pre-scan upper bound reaches the k-th best pre-scan
 * lower bound so far; the second refines the k most promising of those first, then the rest against that floor.
 */
export function scanPart(job: PartJob, dots: DotsFn): Prescan {
  const { buffers: b, k, minCosine, mask, qScale, qError, query } = job;
  const stride = b.stride;
  const dims = b.dims;
  const pairsPtr = job.slot * b.slotBytes;
  const qPairsPtr = pairsPtr + 2 * stride;
  const outPtr = qPairsPtr + 2 * stride;
  const memory = b.memory.buffer;
  if (job.start % CHUNK_ROWS !== 0) throw new RangeError(`a scan starts on a chunk of ${CHUNK_ROWS} rows, not at row ${job.start}`);
  const pairs = writeQueryPairs(memory, job.q16, pairsPtr, qPairsPtr, b.blockRows);
  const out = new Int32Array(memory, outPtr, CHUNK_ROWS);
  const codes = new Int8Array(memory);
  const scales = new Float32Array(b.scales);
  const errors = new Float64Array(b.errors);
  const keys = new Float64Array(b.keys);
  const residuals = new Int8Array(b.residuals);
  const residualScales = new Float32Array(b.residualScales);
  const residualErrors = new Float64Array(b.residualErrors);

  const levels: CodeLevels = { codes, codesOffset: b.codesOffset, stride, blockRows: b.blockRows, scales, residuals, residualScales, dims };
  const nonZero = sparseDims(query);
  const refined = (row: number): number => refinedScore(levels, row, query, nonZero);
  const refinedBound = (row: number): number => residualErrorBound(residualErrors[row]!);

  // Pass 1, row by row: the threshold decided (counted, or kept as ambiguous), and the pre-scan interval of every row
  // that may still belong in the top k kept for pass 2.
  const ambiguous: Prescan['ambiguous'] = { keys: [], lowers: [], uppers: [] };
  let certain = 0;
  let open = scratchFor(0);
  let opened = 0;
  const preFloor = new Float64Array(Math.max(k, 1));
  let floorSize = 0;

  // decideChunk: see the loop. The rows it counts as certain, or -1 when it cannot decide the chunk; `floor`: the k-th
  // best lower bound so far (NaN while fewer than k), as an argument so that the loop's own counters stay local.
  const decideChunk = (chunk: number, n: number, floor: number): number => {
    let lowest = Infinity;
    let highest = -Infinity;
    let widest = 0;
    let taking = 0;
    for (let i = 0; i < n; i++) {
      const row = chunk + i;
      if (mask !== null && mask[row] !== 1) continue;
      taking++;
      const a = scales[row]! * qScale * out[i]!; // as `approx` below, to the bit
      if (a < lowest) lowest = a;
      if (a > highest) highest = a;
      const e = errors[row]!;
      if (e > widest) widest = e;
    }
    const chunkBound = errorBound(widest, qError);
    // Rounding is monotone: no row's upper bound exceeds highest + chunkBound, nor is its lower below lowest - chunkBound.
    if (highest + chunkBound < minCosine) return 0;
    if (lowest - chunkBound >= minCosine && (k === 0 || highest + chunkBound < floor)) return taking;
    return -1;
  };
  let unchecked = 0;
  let undecided = 0;

  for (const c of claimedChunks(job.share, chunksIn(job.end - job.start))) {
    const chunk = job.start + c * CHUNK_ROWS;
    const n = Math.min(CHUNK_ROWS, job.end - chunk);
    // With a mask, a chunk none of whose rows may take part is not scanned at all (a filter's rows often cluster: a
    // date range, a workspace's newest memories).
    if (mask !== null && mask.subarray(chunk, chunk + n).indexOf(1) < 0) continue;
    // Chunks start on a block (CHUNK_ROWS is a multiple of the block size); a short last block's extra rows are ignored.
    dots(b.codesOffset + chunk * stride, pairsPtr, qPairsPtr, pairs, Math.ceil(n / b.blockRows), b.blockRows, b.blockBytes, outPtr);
    // The chunk's widest interval first, over the rows taking part, in one pass: when every one of them is certainly
    // at or above the threshold and none can reach the k-th best lower bound, they are counted and left without
    // looking at each (most chunks of a big matrix, once the floor has risen); when none reaches the threshold,
    // skipped. Exactly what the loop below would decide for each row. After a chunk it could not decide, the next
    // 1, 3, 7 or 15 chunks go straight to the loop (a dense query's chunks are seldom decided whole).
    if (unchecked > 0) unchecked--;
    else {
      const decided = decideChunk(chunk, n, floorSize === k ? preFloor[0]! : Number.NaN);
      if (decided >= 0) {
        certain += decided;
        undecided = 0;
        continue;
      }
      undecided = Math.min(undecided + 1, 4);
      unchecked = (1 << undecided) - 1;
    }
    for (let i = 0; i < n; i++) {
      const row = chunk + i;
      if (mask !== null && mask[row] !== 1) continue;
      const approx = scales[row]! * qScale * out[i]!;
      const bound = errorBound(errors[row]!, qError);
      let upper = approx + bound;
      if (upper < minCosine) continue;
      let lower = approx - bound;
      let sharp = 0;
      if (lower >= minCosine) certain++;
      else {
        const r = refined(row);
        const rBound = refinedBound(row);
        lower = r - rBound;
        upper = r + rBound;
        sharp = 1;
        if (upper < minCosine) continue;
        if (lower >= minCosine) certain++;
        else {
          ambiguous.keys.push(keys[row]!);
          ambiguous.lowers.push(lower);
          ambiguous.uppers.push(upper);
        }
      }
      if (k === 0) continue;
      // The k-th best lower bound so far (of the pre-scan, cheap): a row whose upper bound is below it cannot be in the
      // top k, and is not kept for pass 2.
      if (floorSize < k) heapPush(preFloor, floorSize++, lower);
      else if (lower > preFloor[0]!) heapReplaceRoot(preFloor, floorSize, lower);
      if (floorSize === k && upper < preFloor[0]!) continue;
      if (opened === open.rows.length) open = scratchFor(Math.max(OPEN_ROWS_START, 2 * opened), opened);
      open.rows[opened] = row;
      open.lowers[opened] = lower;
      open.uppers[opened] = upper;
      open.sharp[opened] = sharp;
      opened++;
    }
  }

  // Pass 2, the top k. Min-heap of the k best lower bounds: its root is the score an exact top-k member must at least
  // reach, and a row whose upper bound is below it is left out without refining it (refining costs a pass over the
  // row's dims). The k rows with the highest upper bounds go first, so that the root is close to the k-th best score
  // before the other rows are looked at: in scan order it rose slowly, and most refinements were of rows that could
  // not be in the top k.
  const heap = new Float64Array(Math.max(k, 1));
  let heapSize = 0;
  const candidates: number[] = [];
  const candidateLowers: number[] = [];
  const candidateUppers: number[] = [];
  const consider = (j: number): void => {
    let lower = open.lowers[j]!;
    let upper = open.uppers[j]!;
    if (heapSize === k && upper < heap[0]!) return;
    const row = open.rows[j]!;
    if (open.sharp[j] === 0) {
      const r = refined(row);
      const rBound = refinedBound(row);
      lower = r - rBound;
      upper = r + rBound;
    }
    if (heapSize < k) heapPush(heap, heapSize++, lower);
    else if (upper >= heap[0]!) {
      if (lower > heap[0]!) heapReplaceRoot(heap, heapSize, lower);
    } else return;
    candidates.push(row);
    candidateLowers.push(lower);
    candidateUppers.push(upper);
  };
  if (k > 0 && opened > 0) {
    // The k-th highest upper bound (a min-heap of k uppers); rows at or above it are considered first.
    const best = new Float64Array(k);
    let bestSize = 0;
    for (let j = 0; j < opened; j++) {
      const upper = open.uppers[j]!;
      if (bestSize < k) heapPush(best, bestSize++, upper);
      else if (upper > best[0]!) heapReplaceRoot(best, bestSize, upper);
    }
    const first = bestSize < k ? -Infinity : best[0]!;
    for (let j = 0; j < opened; j++) if (open.uppers[j]! >= first) consider(j);
    for (let j = 0; j < opened; j++) if (open.uppers[j]! < first) consider(j);
  }

  // Only candidates that still reach the part's final floor go back (the merged floor is at least as high).
  const floor = heapSize < k ? -Infinity : heap[0]!;
  const kept: Prescan['candidates'] = { keys: [], lowers: [], uppers: [] };
  for (let i = 0; i < candidates.length; i++) {
    if (candidateUppers[i]! < floor) continue;
    kept.keys.push(keys[candidates[i]!]!);
    kept.lowers.push(candidateLowers[i]!);
    kept.uppers.push(candidateUppers[i]!);
  }
  return { certain, ambiguous, candidates: kept };
}

/** Per-row scratch of pass 2 (rows still open for the top k), reused across scans of this thread: scans never overlap. */
interface OpenRows {
  rows: Int32Array;
  lowers: Float64Array;
  uppers: Float64Array;
  sharp: Uint8Array;
}

let scratch: OpenRows = { rows: new Int32Array(0), lowers: new Float64Array(0), uppers: new Float64Array(0), sharp: new Uint8Array(0) };

/**
 * Open rows a scan starts with room for; it grows by doubling. Sized by what a scan keeps open, not by its range: every
 * part may claim any chunk of the search (chunk-claims.ts), and room for all of them in each of up to 16 threads would
 * be 21 bytes × rows × threads.
 */
const OPEN_ROWS_START = 4 * CHUNK_ROWS;

/** This thread's scratch with room for at least `rows` open rows, the first `keep` of them carried over. */
function scratchFor(rows: number, keep = 0): OpenRows {
  if (scratch.rows.length < rows) {
    const grown = { rows: new Int32Array(rows), lowers: new Float64Array(rows), uppers: new Float64Array(rows), sharp: new Uint8Array(rows) };
    grown.rows.set(scratch.rows.subarray(0, keep));
    grown.lowers.set(scratch.lowers.subarray(0, keep));
    grown.uppers.set(scratch.uppers.subarray(0, keep));
    grown.sharp.set(scratch.sharp.subarray(0, keep));
    scratch = grown;
  }
  return scratch;
}

/** Inserts (key, score) into the sorted top lists if it belongs in the best k. */
export function insertTop(keys: number[], scores: number[], k: number, key: number, score: number): void {
  if (k <= 0) return;
  const n = scores.length;
  if (n < k) {
    keys.push(key);
    scores.push(score);
  } else if (better(score, key, scores[n - 1]!, keys[n - 1]!)) {
    keys[n - 1] = key;
    scores[n - 1] = score;
  } else return;
  for (let i = keys.length - 1; i > 0 && better(scores[i]!, keys[i]!, scores[i - 1]!, keys[i - 1]!); i--) {
    [keys[i], keys[i - 1]] = [keys[i - 1]!, keys[i]!];
    [scores[i], scores[i - 1]] = [scores[i - 1]!, scores[i]!];
  }
}

function heapPush(heap: Float64Array, size: number, value: number): void {
  let i = size;
  heap[i] = value;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (heap[p]! <= heap[i]!) return;
    [heap[p], heap[i]] = [heap[i]!, heap[p]!];
    i = p;
  }
}

function heapReplaceRoot(heap: Float64Array, size: number, value: number): void {
  heap[0] = value;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < size && heap[l]! < heap[m]!) m = l;
    if (r < size && heap[r]! < heap[m]!) m = r;
    if (m === i) return;
    [heap[m], heap[i]] = [heap[i]!, heap[m]!];
    i = m;
  }
}
