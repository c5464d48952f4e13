import { CODE_MAX, codeOf, roundErrorUp } from './quantize.ts';
import { slotBytesFor } from './scan-part.ts';
import { wasm, type SharedMemory } from './wasm.ts';

/**
 * The shared memory of a VectorMatrix, its layout and how one row is written into it: shared by the matrix itself and
 * by the loader (sqlite-vector-load-worker.ts), which fills a matrix's rows in another thread, so that a row loaded
 * there is byte for byte the row an upsert writes.
 */

/** Scratch slots in each matrix's memory: slot 0 for this thread, one per worker after it. */
export const MAX_SCAN_THREADS = 16;
const SLOTS = MAX_SCAN_THREADS + 1;
const PAGE = 65536;

/**
 * The codes are stored in blocks of `blockRows` rows, by dimension pair: within a block, the 2 × blockRows bytes of
 * pair p hold dimensions 2p and 2p + 1 of row 0, then of row 1, … (codeIndex). That is what the SIMD kernel reads
 * (int8-dot-kernel.ts): a query's zero dimensions cost nothing, and each pair it reads is one contiguous run, where a
 * row-major scan read every code of every row. Big matrices use blocks of LARGE_BLOCK_ROWS (runs of 2 KiB, long enough
 * for the hardware to stream them; with 32-row blocks the scattered 64-byte lines of a sparse query waited on memory
 * one by one); small ones SMALL_BLOCK_ROWS, since writing one row touches every page of its block.
 */
export const SMALL_BLOCK_ROWS = 32;
export const LARGE_BLOCK_ROWS = 1024;
/** Capacity from which a matrix is laid out in large blocks (a matrix keeps its layout as it grows). */
const LARGE_BLOCKS_FROM = 8 * LARGE_BLOCK_ROWS;

export const blockRowsFor = (capacity: number): number => (capacity >= LARGE_BLOCKS_FROM ? LARGE_BLOCK_ROWS : SMALL_BLOCK_ROWS);

export interface MatrixLayout {
  dims: number;
  /** Bytes of int8 codes a row (dims rounded up to the kernel's 16). */
  stride: number;
  /** Rows a block of codes holds (SMALL_BLOCK_ROWS or LARGE_BLOCK_ROWS; both divide CHUNK_ROWS). */
  blockRows: number;
  /** Bytes of a block's codes. */
  blockBytes: number;
  slotBytes: number;
  /** Where the codes start in the WebAssembly memory, after the scratch slots. */
  codesOffset: number;
}

export function layoutFor(dims: number, blockRows: number): MatrixLayout {
  const stride = Math.ceil(dims / 16) * 16;
  const slotBytes = slotBytesFor(stride);
  return { dims, stride, blockRows, blockBytes: stride * blockRows, slotBytes, codesOffset: Math.ceil((SLOTS * slotBytes) / 16) * 16 };
}

type CodePlacement = Pick<MatrixLayout, 'codesOffset' | 'stride' | 'blockRows'>;

/** Where the code of (row, dim) is in the memory (see blockRowsFor). */
export const codeIndex = (layout: CodePlacement, row: number, dim: number): number =>
  layout.codesOffset + Math.floor(row / layout.blockRows) * layout.stride * layout.blockRows + (dim >> 1) * 2 * layout.blockRows +
  (row % layout.blockRows) * 2 + (dim & 1);

/** The bytes of the codes of rows [0, rows), whole blocks. */
export const codeBytesFor = (layout: Pick<MatrixLayout, 'stride' | 'blockRows'>, rows: number): number =>
  Math.ceil(rows / layout.blockRows) * layout.blockRows * layout.stride;

/** The int8 dot product of row `row`'s codes with the int16 query codes `q16` (what the kernel computes for it). */
export function rowCodesDot(layout: CodePlacement, codes: Int8Array, row: number, q16: Int16Array): number {
  const base = codeIndex(layout, row, 0);
  let sum = 0;
  for (let pair = 0; pair < layout.stride >> 1; pair++) {
    const at = base + pair * 2 * layout.blockRows;
    sum += codes[at]! * q16[2 * pair]! + codes[at + 1]! * q16[2 * pair + 1]!;
  }
  return sum;
}

/**
 * Room for `capacity` rows: keys, code scales and errors, the codes in a WebAssembly memory, and a second int8 level,
 * the codes of each row's quantisation residual with their own scale and error (what refines the pre-scan's interval
 * of an undecided row 100-fold: scan-part.ts). The float32 vectors are not kept: the re-rank reads the few rows it
 * still needs from their source (rerank.ts), so a row costs half its float bytes (plus 32).
 */
export interface MatrixRows {
  capacity: number;
  /** The codes' block size (matrix-storage.ts: blockRowsFor). */
  blockRows: number;
  keys: SharedArrayBuffer;
  scales: SharedArrayBuffer;
  errors: SharedArrayBuffer;
  memory: SharedMemory;
  residuals: SharedArrayBuffer;
  residualScales: SharedArrayBuffer;
  residualErrors: SharedArrayBuffer;
}

/** Fresh (zeroed) buffers for `capacity` rows. Pages never written cost no memory, so spare capacity is cheap. */
export function allocateRows(layout: MatrixLayout, capacity: number): MatrixRows {
  return {
    capacity,
    blockRows: layout.blockRows,
    keys: new SharedArrayBuffer(capacity * 8),
    scales: new SharedArrayBuffer(capacity * 4),
    errors: new SharedArrayBuffer(capacity * 8),
    memory: newMemory(pagesFor(layout, capacity)),
    residuals: new SharedArrayBuffer(capacity * layout.dims),
    residualScales: new SharedArrayBuffer(capacity * 4),
    residualErrors: new SharedArrayBuffer(capacity * 8),
  };
}

export const pagesFor = (layout: MatrixLayout, rows: number): number => Math.ceil((layout.codesOffset + codeBytesFor(layout, rows)) / PAGE);

/** A shared memory with room to double before it must be replaced (its maximum is reserved address space only). */
export function newMemory(pages: number): SharedMemory {
  return new wasm.Memory({ initial: pages, maximum: Math.min(65536, Math.max(16, pages * 2)), shared: true });
}

/** Typed views of MatrixRows, for writing rows. */
export interface RowViews {
  keys: Float64Array;
  scales: Float32Array;
  errors: Float64Array;
  codes: Int8Array;
  residuals: Int8Array;
  residualScales: Float32Array;
  residualErrors: Float64Array;
}

export function viewsOf(rows: Omit<MatrixRows, 'capacity' | 'blockRows'>): RowViews {
  return {
    keys: new Float64Array(rows.keys), scales: new Float32Array(rows.scales),
    errors: new Float64Array(rows.errors), codes: new Int8Array(rows.memory.buffer),
    residuals: new Int8Array(rows.residuals), residualScales: new Float32Array(rows.residualScales),
    residualErrors: new Float64Array(rows.residualErrors),
  };
}

/**
 * Writes the int8 codes of `vector` normalised to unit length (a zero vector stays zero) as row `row`: the codes and
 * ‖e‖ quantizeInto would compute from the float32 unit row unitRowInto gives (the row the re-rank scores), in two
 * passes over the vector (the load of 100k rows spends most of its time here).
 * max |fround(x·inv)| = fround(max |x| · inv), rounding being monotonic, so the scale is the one computed from that row.
 * The residual e = x − s·c gets its own int8 codes c2 in the same pass: |e_i| ≤ s/2 (c_i is x_i / s rounded), so its
 * scale s2 = s / 254 is known before e is, and c2 = round(e / s2) stays within ±127. ‖x − s·c − s2·c2‖ (rounded up)
 * is stored: the second level's error, the bound of the refined score (scan-part.ts).
 */
export function writeRow(layout: MatrixLayout, views: RowViews, row: number, key: number, vector: ArrayLike<number>): void {
  const dims = layout.dims;
  let sq = 0;
  let max = 0;
  for (let i = 0; i < dims; i++) {
    const x = vector[i]!;
    sq += x * x;
    const a = Math.abs(x);
    if (a > max) max = a;
  }
  const inv = sq > 0 ? 1 / Math.sqrt(sq) : 0;
  const { codes, residuals } = views;
  // Codes of dims 2p and 2p + 1 are adjacent, pairs 2 × blockRows bytes apart (blockRowsFor).
  const codeBase = codeIndex(layout, row, 0);
  const pairBytes = 2 * layout.blockRows;
  const residualBase = row * dims;
  const scale = Math.fround(Math.fround(max * inv) / CODE_MAX);
  const scale2 = Math.fround(scale / (2 * CODE_MAX));
  let err = 0;
  let err2 = 0;
  if (scale === 0) {
    for (let i = 0; i < dims; i++) codes[codeBase + (i >> 1) * pairBytes + (i & 1)] = 0;
    residuals.fill(0, residualBase, residualBase + dims);
  } else {
    for (let i = 0; i < dims; i++) {
      const x = Math.fround(vector[i]! * inv);
      const c = codeOf(x / scale);
      codes[codeBase + (i >> 1) * pairBytes + (i & 1)] = c;
      const e = x - scale * c;
      err += e * e;
      const c2 = scale2 === 0 ? 0 : codeOf(e / scale2);
      residuals[residualBase + i] = c2;
      const e2 = e - scale2 * c2;
      err2 += e2 * e2;
    }
    err = roundErrorUp(Math.sqrt(err));
  }
  views.keys[row] = key;
  views.scales[row] = scale;
  views.errors[row] = err;
  views.residualScales[row] = scale2;
  views.residualErrors[row] = roundErrorUp(Math.sqrt(err2));
}

/**
 * The float32 unit row of `vector` (as writeRow normalises it) into `out`: the same float64 sum of squares and one
 * multiply per element, so the row the re-rank scores is bit for bit the row the codes were made from.
 */
export function unitRowInto(vector: ArrayLike<number>, dims: number, out: Float32Array): void {
  let sq = 0;
  for (let i = 0; i < dims; i++) sq += vector[i]! * vector[i]!;
  const inv = sq > 0 ? 1 / Math.sqrt(sq) : 0;
  for (let i = 0; i < dims; i++) out[i] = vector[i]! * inv;
}

/** Copies `count` rows from row `from` to row `to` (non-overlapping ranges). */
export function copyRows(layout: MatrixLayout, views: RowViews, from: number, to: number, count: number): void {
  const { dims, stride } = layout;
  const { keys, scales, errors, codes, residuals, residualScales, residualErrors } = views;
  residuals.copyWithin(to * dims, from * dims, (from + count) * dims);
  residualScales.copyWithin(to, from, from + count);
  residualErrors.copyWithin(to, from, from + count);
  // A row's codes are spread over its block, two bytes a pair (blockRowsFor): copied pair by pair, as int16.
  const codePairs = new Int16Array(codes.buffer);
  for (let i = 0; i < count; i++) {
    const source = codeIndex(layout, from + i, 0) >> 1;
    const target = codeIndex(layout, to + i, 0) >> 1;
    for (let pair = 0; pair < stride >> 1; pair++) codePairs[target + pair * layout.blockRows] = codePairs[source + pair * layout.blockRows]!;
  }
  keys.copyWithin(to, from, from + count);
  scales.copyWithin(to, from, from + count);
  errors.copyWithin(to, from, from + count);
}
