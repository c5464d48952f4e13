import { int8Dots, type DotsFn } from './int8-dot-kernel.ts';
import { errorBound, quantizeQuery, residualErrorBound } from './quantize.ts';
import { chunksIn, refinedScore, scanPart, sparseDims, type CodeLevels, type MatrixBuffers, type PartJob, type PartResult } from './scan-part.ts';
import { newChunkOwners } from './chunk-claims.ts';
import type { ScanPool } from './scan-pool.ts';
import { exactScores, finishParts, rerank, type PartOutcome, type VectorSource } from './rerank.ts';
import {
  allocateRows, blockRowsFor, codeBytesFor, codeIndex, copyRows, layoutFor, newMemory, pagesFor, rowCodesDot, unitRowInto, viewsOf, writeRow, type MatrixLayout,
  type MatrixRows, type RowViews,
} from './matrix-storage.ts';
import { RowIndex } from './row-index.ts';
import { AllowedKeys, KeyBitmap } from './allowed-keys.ts';

/** How sharp VectorMatrix.estimates's bounds are: both code levels (`sharp`), or the first level's only (`coarse`). */
export type EstimatePrecision = 'sharp' | 'coarse';

/**
 * An exact vector index for one scope and one model. Only the int8 codes of the unit-length rows, with a per-row scale
 * and error, are kept in memory (shared, a WebAssembly memory: the pre-scan is a SIMD kernel); the float vectors stay
 * where they are stored (a VectorSource: the store's table for the server), which costs a quarter of keeping them
 * here. A search pre-scans every row, keeps those whose error bound can still reach the k-th best or straddles the
 * threshold, and scores those few exactly from their source (rerank.ts): the answer, and `total`, are those of a full
 * exact scan (see quantize.ts for the bound). Searches given a ScanPool pre-scan in worker threads over the same
 * memory, split across the pool; each worker re-ranks its part too when the source names a store it can open
 * (VectorSource.store), else the calling thread re-ranks. Writes that arrive while a search is under way wait until
 * it ends, so a scan never sees a row half written or moved; a row whose source no longer matches its codes (a write
 * racing the search) makes the search run again. Deletion swaps the last row into the hole, keeping the
 * matrix dense. A matrix can also be adopted whole from rows another thread filled (fromRows: the cold-start loader).
 * Without a source, the matrix keeps a copy of each vector it is given (tests, benchmarks).
 */
export interface MatrixHit {
  key: number;
  cosine: number;
}

let nextMatrixId = 1;

export class VectorMatrix {
  readonly dims: number;
  readonly stride: number;
  /** Identifies this matrix's memory to the workers (which cache a kernel instance per memory). */
  readonly id = nextMatrixId++;
  private layout: MatrixLayout;
  private capacity = 0;
  private rows!: MatrixRows;
  private views!: RowViews;
  private memoryGeneration = 0;
  /** Row buffers allocated so far, and how many there were when the scan threads last read this matrix (-1: never). */
  private allocations = 0;
  private pooledAllocations = -1;
  private count = 0;
  /** Moves on whenever a key may have changed rows (added, removed, rows adopted): masks built before are stale. */
  private rowLayout = 0;
  private rowOf!: RowIndex;
  private dots: DotsFn | null = null;
  /** Scans in worker threads reading this matrix now, and the writes waiting for them to end. */
  private activeScans = 0;
  private pending: (() => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  private readonly source: VectorSource;
  /** The vectors given, when the matrix has no source of its own. */
  private readonly kept: Map<number, Float32Array> | null;

  constructor(dims: number, initialCapacity = 1024, source?: VectorSource, filled?: { rows: MatrixRows; count: number }) {
    this.dims = dims;
    // A matrix loaded big (fromRows) comes in large blocks; one grown from writes keeps the small ones it began with.
    this.layout = layoutFor(dims, filled ? filled.rows.blockRows : blockRowsFor(initialCapacity));
    this.stride = this.layout.stride;
    const kept = source ? null : new Map<number, Float32Array>();
    this.kept = kept;
    this.source = source ?? { read: (key) => kept!.get(key) };
    if (filled) this.adopt(filled.rows, filled.count);
    else this.allocate(Math.max(1, initialCapacity));
  }

  /**
   * A matrix over rows filled elsewhere (another thread wrote rows [0, count) with writeRow, keys distinct) from the
   * vectors `source` reads: only the key index is built here.
   */
  static fromRows(dims: number, rows: MatrixRows, count: number, source: VectorSource): VectorMatrix {
    if (count > rows.capacity) throw new RangeError(`${count} rows do not fit in ${rows.capacity}`);
    return new VectorMatrix(dims, 0, source, { rows, count });
  }

  get size(): number {
    return this.count;
  }

  /** Bytes this matrix holds for its rows (two levels of int8 codes, key, scales and errors per row), for measurements. */
  get bytes(): number {
    return this.capacity * (this.stride + this.dims + 8 + 2 * (4 + 8)) + this.rowOf.bytes;
  }

  /** Adds or replaces the vector stored under `key`; the vector is normalised on the way in. */
  upsert(key: number, vector: ArrayLike<number>): void {
    if (vector.length !== this.dims) throw new RangeError(`expected ${this.dims} dimensions, got ${vector.length}`);
    if (this.activeScans > 0) {
      const copy = Float32Array.from(vector);
      this.pending.push(() => this.write(key, copy));
      return;
    }
    this.write(key, vector);
  }

  remove(key: number): boolean {
    if (this.activeScans > 0) {
      // The answer must be known now: a key waiting to be written counts as present.
      const present = this.rowOf.get(key) >= 0 || this.pending.length > 0;
      this.pending.push(() => { this.drop(key); });
      return present;
    }
    return this.drop(key);
  }

  /**
   * The `limit` rows most similar to `query` with cosine >= `minCosine`, best first (equal scores by ascending key),
   * and how many rows reach the threshold in all. `allowed`, when given, restricts the scan to those keys (a SQL
   * prefilter's result; repeats and keys the matrix does not hold are ignored; as AllowedKeys, its mask is built once
   * per row layout); `excluded` leaves those keys out
   * (memories not valid at the query's moment). Runs in this thread.
   */
  search(query: ArrayLike<number>, limit: number, minCosine: number, allowed?: Iterable<number> | AllowedKeys | null,
    excluded?: ReadonlySet<number> | null): { hits: MatrixHit[]; total: number } {
    const job = this.prepare(query, limit, minCosine, allowed, excluded);
    if (!job) return { hits: [], total: 0 };
    this.dots ??= int8Dots(this.rows.memory);
    // Nothing can write in between here: a stale row is one whose source changed without telling the matrix.
    return toHits(rerank([scanPart({ ...job, slot: 0, start: 0, end: this.count }, this.dots)], job.k, minCosine,
      job.query, this.source));
  }

  /**
   * As search(), the pre-scan in `pool`'s worker threads: this thread prepares the query and merges the parts, which
   * the workers re-rank from the store when the source names one (else this thread re-ranks what they could not
   * decide). Without a pool, or for a matrix too small to be worth a message, in this thread.
   *
   * Staleness, with the workers reading on their own connections: a part's reads begin after the part was posted, so
   * they see every write whose codes the matrix held then (a write reaches the matrix only after its COMMIT), and
   * maybe writes committed since, whose matrix updates wait in `pending` until the search ends (they are queued in
   * the same macrotask as their COMMIT, before this thread can handle a worker's answer). A row read that no longer
   * matches its codes marks the part stale; with a write queued meanwhile the search runs again once it applied.
   */
  async searchIn(pool: ScanPool | null, query: ArrayLike<number>, limit: number, minCosine: number,
    allowed?: Iterable<number> | AllowedKeys | null,
    options: { callerBusy?: boolean | undefined; excluded?: ReadonlySet<number> | null | undefined } = {},
  ): Promise<{ hits: MatrixHit[]; total: number }> {
    for (let attempt = 1; ; attempt++) {
      // Writes queued behind earlier searches must be visible to this one.
      while (this.pending.length > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      if (!pool || this.count * this.dims < pool.inlineBelow) return this.search(query, limit, minCosine, allowed, options.excluded);
      const job = this.prepare(query, limit, minCosine, allowed, options.excluded);
      if (!job) return { hits: [], total: 0 };
      // The matrix grew into new buffers since the workers last read it: they let go of the old ones (ScanPool.retire),
      // which their heaps would otherwise keep mapped.
      if (this.pooledAllocations !== this.allocations) {
        if (this.pooledAllocations >= 0) pool.retire(this.id);
        this.pooledAllocations = this.allocations;
      }
      const parts = pool.partsFor(this.count, this.dims, options.callerBusy);
      const owners = newChunkOwners(chunksIn(this.count));
      this.activeScans++;
      let result: PartResult & { stale: boolean };
      let wroteMeanwhile: boolean;
      try {
        const store = this.source.store ?? null;
        const outcomes: PartOutcome[] = await Promise.all(Array.from({ length: parts }, (_, p) =>
          pool.run({ ...job, start: 0, end: this.count, share: { owners, part: p + 1, parts }, store })));
        // Before the writes queued meanwhile apply: a source that keeps its own copies still matches the codes.
        result = finishParts(outcomes, job.k, minCosine, job.query, this.source);
      } finally {
        this.activeScans--;
        wroteMeanwhile = this.pending.length > 0;
        if (this.activeScans === 0) this.flushPending();
      }
      // A row written or deleted while the workers scanned: once the write has applied, the search runs again. A row
      // the source changed without telling the matrix (another connection's write, before the reload) would read the
      // same on every attempt: the answer stands, as in search().
      if (!result.stale || !wroteMeanwhile || attempt >= MAX_ATTEMPTS) return toHits(result);
    }
  }

  /**
   * The exact cosine to `query` of each given key the matrix holds (exactScores, as a search's re-rank scores it), once
   * the writes waiting for scans have applied, as a search waits for them.
   */
  async exactCosines(query: ArrayLike<number>, keys: readonly number[]): Promise<Map<number, number>> {
    while (this.pending.length > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const held = keys.filter((key) => this.rowOf.get(key) >= 0);
    const unit = new Float32Array(this.dims);
    unitRowInto(query, this.dims, unit);
    const scores = exactScores(this.source, unit, held);
    const out = new Map<number, number>();
    held.forEach((key, i) => { if (scores[i] !== undefined) out.set(key, scores[i]); });
    return out;
  }

  /**
   * For each given key the matrix holds, an estimate of its cosine to `query` and the half-width of the interval
   * that holds the exact one, without reading the rows: hybrid search uses it to read only the keyword candidates
   * that may enter its answer. `sharp` (the default): the score and bound the scan refines a row to before reading it
   * (both code levels against the float query, a loop over the dims in JavaScript); `coarse`: the pre-scan's own
   * (the first level against the quantised query, an integer dot product: far cheaper), an interval
   * about a hundred times wider. Nothing while writes wait for a scan to end: the codes of a row written meanwhile
   * would no longer bound its stored vector.
   */
  estimates(query: ArrayLike<number>, keys: readonly number[], precision: EstimatePrecision = 'sharp'):
    Map<number, { cosine: number; error: number }> {
    const out = new Map<number, { cosine: number; error: number }>();
    if (this.pending.length > 0) return out;
    const unit = unitQuery(query, this.dims);
    const rows: { key: number; row: number }[] = [];
    for (const key of keys) {
      const row = this.rowOf.get(key);
      if (row >= 0) rows.push({ key, row });
    }
    // An all-zero query scores every row 0 exactly (as the scan has it).
    if (!unit) for (const { key } of rows) out.set(key, { cosine: 0, error: 0 });
    else if (precision === 'coarse') this.coarseEstimates(unit, rows, out);
    else {
      const v = this.views;
      const levels: CodeLevels = {
        codes: v.codes, codesOffset: this.layout.codesOffset, stride: this.stride, blockRows: this.layout.blockRows, scales: v.scales,
        residuals: v.residuals,
        residualScales: v.residualScales, dims: this.dims,
      };
      const nonZero = sparseDims(unit);
      for (const { key, row } of rows) {
        out.set(key, { cosine: refinedScore(levels, row, unit, nonZero), error: residualErrorBound(v.residualErrors[row]!) });
      }
    }
    return out;
  }

  /**
   * The pre-scan's interval of each row (scan-part.ts, pass 1): the same int8 dot product as the kernel's, summed
   * here row by row (a few hundred keyword candidates, not worth a block's kernel call each).
   */
  private coarseEstimates(unit: Float32Array, rows: readonly { key: number; row: number }[], out: Map<number, { cosine: number; error: number }>): void {
    if (rows.length === 0) return;
    const quantized = quantizeQuery(unit, this.stride);
    const { scales, errors, codes } = this.views;
    for (const { key, row } of rows) {
      const dot = rowCodesDot(this.layout, codes, row, quantized.codes);
      out.set(key, { cosine: scales[row]! * quantized.scale * dot, error: errorBound(errors[row]!, quantized.error) });
    }
  }

  /**
   * The rows' buffers and how many are in use (what a snapshot saves: matrix-file.ts), written in place by later
   * writes; null while writes wait for a scan to end (the rows lag the store then).
   */
  storedRows(): { rows: MatrixRows; count: number } | null {
    return this.pending.length > 0 ? null : { rows: this.rows, count: this.count };
  }

  /** The rows' keys and codes as shared buffers (what a scan reads). */
  buffers(): MatrixBuffers & { id: number; generation: number } {
    const { memory, keys, scales, errors, residuals, residualScales, residualErrors } = this.rows;
    return {
      memory, keys, scales, errors, residuals, residualScales, residualErrors, dims: this.dims, stride: this.stride,
      blockRows: this.layout.blockRows, blockBytes: this.layout.blockBytes, slotBytes: this.layout.slotBytes, codesOffset: this.layout.codesOffset, id: this.id, generation: this.memoryGeneration,
    };
  }

  private prepare(query: ArrayLike<number>, limit: number, minCosine: number, allowed?: Iterable<number> | AllowedKeys | null,
    excluded?: ReadonlySet<number> | null): Omit<PartJob, 'slot' | 'start' | 'end'> | null {
    const unit = unitQuery(query, this.dims);
    if (!unit) return null;
    const quantized = quantizeQuery(unit, this.stride);
    // The rows a search may score (1) or not (0); none: every row. A row left out is neither ranked nor counted.
    let mask: Uint8Array | null = null;
    let shared = false;
    if (allowed instanceof AllowedKeys) {
      const layout = `${this.id}:${this.rowLayout}`;
      if (allowed.builtFor !== layout) {
        allowed.mask = allowed.keys instanceof KeyBitmap ? allowed.keys.maskOf(this.views.keys, this.count) : this.maskOf(allowed.keys);
        allowed.builtFor = layout;
      }
      mask = allowed.mask;
      shared = true;
    } else if (allowed) mask = this.maskOf(allowed);
    if (excluded && excluded.size > 0) {
      // A shared mask stays as built: the exclusions go on a copy.
      mask = mask ? (shared ? mask.slice() : mask) : new Uint8Array(this.count).fill(1);
      for (const key of excluded) {
        const row = this.rowOf.get(key);
        if (row >= 0) mask[row] = 0;
      }
    }
    return {
      buffers: this.buffers(), query: unit, q16: quantized.codes, qScale: quantized.scale, qError: quantized.error,
      k: Math.max(0, limit), minCosine, mask,
    };
  }

  /** The rows of `keys` (1), the rest 0; keys the matrix does not hold are ignored. */
  private maskOf(keys: Iterable<number>): Uint8Array {
    const mask = new Uint8Array(this.count);
    for (const key of keys) {
      const row = this.rowOf.get(key);
      if (row >= 0) mask[row] = 1;
    }
    return mask;
  }

  private write(key: number, vector: ArrayLike<number>): void {
    this.kept?.set(key, Float32Array.from(vector));
    let row = this.rowOf.get(key);
    if (row < 0) {
      row = this.count;
      this.ensureCapacity(row + 1);
      this.count++;
      this.rowLayout++;
      this.views.keys[row] = key;
      this.rowOf.set(key, row);
    }
    writeRow(this.layout, this.views, row, key, vector);
  }

  private drop(key: number): boolean {
    const row = this.rowOf.get(key);
    if (row < 0) return false;
    this.kept?.delete(key);
    // The index reads keys from the key column: forget the key while its row still holds it.
    this.rowOf.delete(key);
    this.rowLayout++;
    const last = this.count - 1;
    if (row !== last) {
      this.rowOf.set(this.views.keys[last]!, row);
      copyRows(this.layout, this.views, last, row, 1);
    }
    this.count--;
    return true;
  }

  private flushPending(): void {
    const ops = this.pending;
    this.pending = [];
    for (const op of ops) op();
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private ensureCapacity(rows: number): void {
    if (rows <= this.capacity) return;
    this.allocate(Math.max(rows, Math.ceil(this.capacity * 1.5)));
  }

  /**
   * (Re)allocates room for `rows` rows, keeping the rows stored. Untouched pages of a fresh buffer cost no memory
   * until written, so spare capacity is cheap. The WebAssembly memory grows in place when its maximum allows.
   */
  private allocate(rows: number): void {
    this.allocations++;
    // Grown big from writes: the codes move to large blocks (blockRowsFor), as a load of that many rows lays them out.
    const previous = this.layout;
    const relayout = this.capacity > 0 && blockRowsFor(rows) > previous.blockRows;
    if (relayout) this.layout = layoutFor(this.dims, blockRowsFor(rows));
    const fresh = allocateRows(this.layout, rows);
    if (relayout) {
      const from = this.views.codes;
      const to = new Int8Array(fresh.memory.buffer);
      for (let row = 0; row < this.count; row++) {
        for (let d = 0; d < this.stride; d++) to[codeIndex(this.layout, row, d)] = from[codeIndex(previous, row, d)]!;
      }
      this.memoryGeneration++;
      this.dots = null;
    }
    if (this.capacity > 0) {
      const old = this.views;
      new Float64Array(fresh.keys).set(old.keys.subarray(0, this.count));
      new Float32Array(fresh.scales).set(old.scales.subarray(0, this.count));
      new Float64Array(fresh.errors).set(old.errors.subarray(0, this.count));
      new Int8Array(fresh.residuals).set(old.residuals.subarray(0, this.count * this.dims));
      new Float32Array(fresh.residualScales).set(old.residualScales.subarray(0, this.count));
      new Float64Array(fresh.residualErrors).set(old.residualErrors.subarray(0, this.count));
      // Keep the codes' memory, grown in place when its maximum allows (re-laid out codes are in the fresh one).
      const memory = relayout ? fresh.memory : this.rows.memory;
      const pages = pagesFor(this.layout, rows);
      const current = memory.buffer.byteLength / PAGE;
      fresh.memory = memory;
      if (pages > current) {
        try {
          memory.grow(pages - current);
        } catch {
          // Past its maximum: a bigger memory, the codes copied over.
          const bigger = newMemory(pages);
          new Uint8Array(bigger.buffer).set(new Uint8Array(memory.buffer, 0, this.layout.codesOffset + codeBytesFor(this.layout, this.count)));
          fresh.memory = bigger;
          this.memoryGeneration++;
          this.dots = null;
        }
      }
    }
    this.adopt(fresh, this.count);
  }

  private adopt(rows: MatrixRows, count: number): void {
    this.rowLayout++;
    this.rows = rows;
    this.views = viewsOf(rows);
    this.capacity = rows.capacity;
    this.count = count;
    if (this.rowOf) this.rowOf.rebind(this.views.keys, count, rows.capacity);
    else {
      this.rowOf = new RowIndex(this.views.keys, rows.capacity);
      for (let row = 0; row < count; row++) this.rowOf.set(this.views.keys[row]!, row);
    }
  }
}

const PAGE = 65536;
/** Searches run at most this many times when writes keep racing them; the last answer stands. */
const MAX_ATTEMPTS = 3;

/** `query` scaled to unit length as float32 (the rows' normalisation), or null for a zero vector. */
function unitQuery(query: ArrayLike<number>, dims: number): Float32Array | null {
  if (query.length !== dims) throw new RangeError(`expected ${dims} dimensions, got ${query.length}`);
  const unit = new Float32Array(dims);
  unitRowInto(query, dims, unit);
  return unit.some((x) => x !== 0) ? unit : null;
}

function toHits(r: PartResult): { hits: MatrixHit[]; total: number } {
  return { hits: r.keys.map((key, i) => ({ key, cosine: r.scores[i]! })), total: r.total };
}

