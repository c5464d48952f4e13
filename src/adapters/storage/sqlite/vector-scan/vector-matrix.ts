import { int8Dots, type DotsFn } from './int8-dot-kernel.ts';
import { wasm, type SharedMemory } from './wasm.ts';
import { quantizeInto, quantizeQuery } from './quantize.ts';
import { insertTop, scanPart, slotBytesFor, type MatrixBuffers, type PartJob, type PartResult } from './scan-part.ts';
import type { ScanPool } from './scan-pool.ts';

/**
 * An exact in-memory vector index for one scope and one model. Unit-length rows are kept twice, in shared memory:
 * as float32 (the exact scores) and as int8 codes with a per-row scale in a WebAssembly memory (the pre-scan, a SIMD
 * kernel reading a quarter of the bytes). A search pre-scans every row, keeps those whose error bound can still reach
 * the k-th best, and re-scores those exactly: the answer, and `total`, are those of a full exact scan (see
 * quantize.ts for the bound). Searches given a ScanPool run in worker threads over the same memory, split across
 * the pool; writes that arrive while such scans read the memory wait until they finish, so a scan never sees a row
 * half written or moved. Deletion swaps the last row into the hole, keeping the matrix dense.
 */
export interface MatrixHit {
  key: number;
  cosine: number;
}

/** Scratch slots in each matrix's memory: slot 0 for this thread, one per worker after it. */
export const MAX_SCAN_THREADS = 16;
const SLOTS = MAX_SCAN_THREADS + 1;
const PAGE = 65536;

let nextMatrixId = 1;

export class VectorMatrix {
  readonly dims: number;
  readonly stride: number;
  /** Identifies this matrix's memory to the workers (which cache a kernel instance per memory). */
  readonly id = nextMatrixId++;
  private capacity: number;
  private memory!: SharedMemory;
  private memoryGeneration = 0;
  private dataBuf!: SharedArrayBuffer;
  private keysBuf!: SharedArrayBuffer;
  private scalesBuf!: SharedArrayBuffer;
  private errorsBuf!: SharedArrayBuffer;
  private data!: Float32Array;
  private keys!: Float64Array;
  private scales!: Float32Array;
  private errors!: Float64Array;
  private count = 0;
  private readonly rowOf = new Map<number, number>();
  private readonly codesOffset: number;
  private readonly slotBytes: number;
  private dots: DotsFn | null = null;
  /** Scans in worker threads reading this matrix now, and the writes waiting for them to end. */
  private activeScans = 0;
  private pending: (() => void)[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(dims: number, initialCapacity = 1024) {
    this.dims = dims;
    this.stride = Math.ceil(dims / 16) * 16;
    this.slotBytes = slotBytesFor(this.stride);
    this.codesOffset = Math.ceil((SLOTS * this.slotBytes) / 16) * 16;
    this.capacity = 0;
    this.allocate(Math.max(1, initialCapacity));
  }

  get size(): number {
    return this.count;
  }

  /** Bytes this matrix holds for its rows (float32 + int8 + key, scale and error per row), for measurements. */
  get bytes(): number {
    return this.capacity * (this.dims * 4 + this.stride + 8 + 4 + 8);
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
      const present = this.rowOf.has(key) || this.pending.length > 0;
      this.pending.push(() => { this.drop(key); });
      return present;
    }
    return this.drop(key);
  }

  /**
   * The `limit` rows most similar to `query` with cosine >= `minCosine`, best first (equal scores by ascending key),
   * and how many rows reach the threshold in all. `allowed`, when given, restricts the scan to those keys (a SQL
   * prefilter's result). Runs in this thread.
   */
  search(query: ArrayLike<number>, limit: number, minCosine: number, allowed?: ReadonlySet<number> | null):
    { hits: MatrixHit[]; total: number } {
    const job = this.prepare(query, limit, minCosine, allowed);
    if (!job) return { hits: [], total: 0 };
    this.dots ??= int8Dots(this.memory);
    return toHits(scanPart({ ...job, slot: 0, start: 0, end: this.count }, this.dots));
  }

  /**
   * As search(), in `pool`'s worker threads: this thread only prepares the query and merges the parts. Without a pool,
   * or for a matrix too small to be worth a message, in this thread.
   */
  async searchIn(pool: ScanPool | null, query: ArrayLike<number>, limit: number, minCosine: number,
    allowed?: ReadonlySet<number> | null): Promise<{ hits: MatrixHit[]; total: number }> {
    // Writes queued behind earlier scans must be visible to this one.
    while (this.pending.length > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (!pool || this.count * this.dims < pool.inlineBelow) return this.search(query, limit, minCosine, allowed);
    const job = this.prepare(query, limit, minCosine, allowed);
    if (!job) return { hits: [], total: 0 };
    const ranges = pool.split(this.count, this.dims);
    this.activeScans++;
    let parts: PartResult[];
    try {
      parts = await Promise.all(ranges.map(([start, end]) => pool.run({ ...job, start, end })));
    } finally {
      this.activeScans--;
      if (this.activeScans === 0) this.flushPending();
    }
    return toHits(mergeParts(parts, limit));
  }

  /** The rows' float32 vectors, keys and codes as shared buffers (what a scan reads). */
  buffers(): MatrixBuffers & { id: number; generation: number } {
    return {
      memory: this.memory, data: this.dataBuf, keys: this.keysBuf, scales: this.scalesBuf, errors: this.errorsBuf,
      dims: this.dims, stride: this.stride, slotBytes: this.slotBytes, codesOffset: this.codesOffset,
      id: this.id, generation: this.memoryGeneration,
    };
  }

  private prepare(query: ArrayLike<number>, limit: number, minCosine: number, allowed?: ReadonlySet<number> | null):
    Omit<PartJob, 'slot' | 'start' | 'end'> | null {
    const dims = this.dims;
    if (query.length !== dims) throw new RangeError(`expected ${dims} dimensions, got ${query.length}`);
    let sq = 0;
    for (let i = 0; i < dims; i++) sq += query[i]! * query[i]!;
    if (sq === 0) return null;
    const inv = 1 / Math.sqrt(sq);
    const unit = new Float32Array(dims);
    for (let i = 0; i < dims; i++) unit[i] = query[i]! * inv;
    const quantized = quantizeQuery(unit, this.stride);
    let mask: Uint8Array | null = null;
    if (allowed) {
      mask = new Uint8Array(this.count);
      for (const key of allowed) {
        const row = this.rowOf.get(key);
        if (row !== undefined) mask[row] = 1;
      }
    }
    return {
      buffers: this.buffers(), query: unit, q16: quantized.codes, qScale: quantized.scale, qError: quantized.error,
      k: Math.max(0, limit), minCosine, mask,
    };
  }

  private write(key: number, vector: ArrayLike<number>): void {
    let row = this.rowOf.get(key);
    if (row === undefined) {
      row = this.count;
      this.ensureCapacity(row + 1);
      this.count++;
      this.keys[row] = key;
      this.rowOf.set(key, row);
    }
    const dims = this.dims;
    let sq = 0;
    for (let i = 0; i < dims; i++) sq += vector[i]! * vector[i]!;
    const inv = sq > 0 ? 1 / Math.sqrt(sq) : 0;
    const base = row * dims;
    for (let i = 0; i < dims; i++) this.data[base + i] = vector[i]! * inv;
    const codes = new Int8Array(this.memory.buffer, this.codesOffset + row * this.stride, this.stride);
    const [scale, error] = quantizeInto(this.data, base, dims, codes, 0);
    this.scales[row] = scale;
    this.errors[row] = error;
  }

  private drop(key: number): boolean {
    const row = this.rowOf.get(key);
    if (row === undefined) return false;
    const last = this.count - 1;
    if (row !== last) {
      const movedKey = this.keys[last]!;
      this.data.copyWithin(row * this.dims, last * this.dims, (last + 1) * this.dims);
      new Uint8Array(this.memory.buffer).copyWithin(this.codesOffset + row * this.stride, this.codesOffset + last * this.stride,
        this.codesOffset + (last + 1) * this.stride);
      this.keys[row] = movedKey;
      this.scales[row] = this.scales[last]!;
      this.errors[row] = this.errors[last]!;
      this.rowOf.set(movedKey, row);
    }
    this.count--;
    this.rowOf.delete(key);
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
    const dims = this.dims;
    const data = new SharedArrayBuffer(rows * dims * 4);
    const keys = new SharedArrayBuffer(rows * 8);
    const scales = new SharedArrayBuffer(rows * 4);
    const errors = new SharedArrayBuffer(rows * 8);
    const pages = Math.ceil((this.codesOffset + rows * this.stride) / PAGE);
    if (this.capacity > 0) {
      new Float32Array(data).set(this.data.subarray(0, this.count * dims));
      new Float64Array(keys).set(this.keys.subarray(0, this.count));
      new Float32Array(scales).set(this.scales.subarray(0, this.count));
      new Float64Array(errors).set(this.errors.subarray(0, this.count));
    }
    const current = this.capacity > 0 ? this.memory.buffer.byteLength / PAGE : 0;
    if (current === 0) this.memory = newMemory(pages);
    else if (pages > current) {
      try {
        this.memory.grow(pages - current);
      } catch {
        // Past its maximum: a bigger memory, the codes copied over.
        const bigger = newMemory(pages);
        new Uint8Array(bigger.buffer).set(new Uint8Array(this.memory.buffer, 0, this.codesOffset + this.count * this.stride));
        this.memory = bigger;
        this.memoryGeneration++;
        this.dots = null;
      }
    }
    this.dataBuf = data;
    this.keysBuf = keys;
    this.scalesBuf = scales;
    this.errorsBuf = errors;
    this.data = new Float32Array(data);
    this.keys = new Float64Array(keys);
    this.scales = new Float32Array(scales);
    this.errors = new Float64Array(errors);
    this.capacity = rows;
  }
}

/** A shared memory with room to double before it must be replaced (its maximum is reserved address space only). */
function newMemory(pages: number): SharedMemory {
  return new wasm.Memory({ initial: pages, maximum: Math.min(65536, Math.max(16, pages * 2)), shared: true });
}

/** The best `k` of the parts' exact top lists (each already sorted), and the summed totals. */
export function mergeParts(parts: readonly PartResult[], k: number): PartResult {
  if (parts.length === 1) return parts[0]!;
  const keys: number[] = [];
  const scores: number[] = [];
  let total = 0;
  for (const part of parts) {
    total += part.total;
    for (let i = 0; i < part.keys.length; i++) insertTop(keys, scores, k, part.keys[i]!, part.scores[i]!);
  }
  return { keys, scores, total };
}

function toHits(r: PartResult): { hits: MatrixHit[]; total: number } {
  return { hits: r.keys.map((key, i) => ({ key, cosine: r.scores[i]! })), total: r.total };
}

