import type { Worker } from 'node:worker_threads';
import { int8Dots, type DotsFn } from './int8-dot-kernel.ts';
import { scanPart, type PartJob } from './scan-part.ts';
import type { PartOutcome, StoreRef } from './rerank.ts';
import { startWorker } from './start-worker.ts';

/**
 * Worker threads that pre-scan VectorMatrix memory off the event loop and, for a matrix whose vectors are in a store
 * file, re-rank each part there too (scan-worker.ts; otherwise rerank.ts finishes the search in the caller's thread).
 * Each search is split into one part per worker (when the matrix is big enough to be worth it), the parts sharing its
 * rows chunk by chunk (chunk-claims.ts), and parts of concurrent searches queue FIFO, so one search uses every core
 * and several share them. A worker that dies mid-scan has its part finished in this thread (the answer stays exact)
 * and is replaced; close() terminates them all.
 */
/** `store`: where the worker reads the part's undecided rows itself (absent: it returns the pre-scan). */
type PoolJob = Omit<PartJob, 'slot'> & { store?: StoreRef | null };
type Entry = { job: PoolJob; resolve: (r: PartOutcome) => void; reject: (e: Error) => void };

interface Slot {
  index: number;
  worker: Worker;
  /** A crashed worker the pool stopped replacing. */
  dead: boolean;
  job: Entry | null;
}

/** Below this many scalar products per part, splitting costs more in messages than it saves. */
const MIN_PART_WORK = 1 << 20;
/**
 * A search whose calling thread has work of its own while the scan runs (hybrid search ranks its keywords then) uses
 * one thread fewer below this many scalar products (about 16k rows of 512 dims), so that the caller keeps a core.
 * Each part costs a message each way, a wake-up and a re-rank of its own candidates (~20 rows, ~8 stored vectors
 * read at limit 10); with the event loop busy, a second part only gets the time it leaves over. Above the bound the
 * scan is several times the keyword leg and needs every thread (BENCHMARKS.md, "Search surfaces").
 */
const SHARE_WITH_CALLER_BELOW = 1 << 23;
/** Replacements of crashed workers before the pool gives up on threads and scans in this thread. */
const MAX_RESPAWNS = 16;

export interface ScanPoolOptions {
  threads: number;
  /** Matrices with fewer scalar products than this are scanned in the calling thread (a message costs more). */
  inlineBelow?: number;
}

/** Default inlineBelow: about 0.1 ms of pre-scan. */
const INLINE_BELOW = 1 << 17;

export class ScanPool {
  readonly threads: number;
  readonly inlineBelow: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Entry[] = [];
  /** Parts re-ranked in a worker from its own connection, and parts whose pre-scan came back to be re-ranked here. */
  readonly stats = { rankedInWorkers: 0, prescansReturned: 0, retired: 0 };
  private closed = false;
  private respawns = 0;
  private inlineDots = new Map<number, DotsFn>();

  constructor(options: ScanPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1 || options.threads > 16) {
      throw new RangeError('a scan pool needs 1 to 16 threads');
    }
    this.threads = options.threads;
    this.inlineBelow = options.inlineBelow ?? INLINE_BELOW;
    for (let i = 0; i < this.threads; i++) this.slots.push(this.spawn(i));
  }

  /**
   * How many parts one search over `rows` rows of `dims` numbers is split into (they share its rows: chunk-claims.ts);
   * `callerBusy`: the calling thread works meanwhile (see SHARE_WITH_CALLER_BELOW).
   */
  partsFor(rows: number, dims: number, callerBusy = false): number {
    const work = rows * dims;
    const parts = Math.max(1, Math.min(this.threads, Math.floor(work / MIN_PART_WORK)));
    return callerBusy && parts > 1 && work < SHARE_WITH_CALLER_BELOW ? parts - 1 : parts;
  }

  run(job: PoolJob): Promise<PartOutcome> {
    if (this.closed) return Promise.reject(new Error('the scan pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * The buffers of matrix `id` as the workers have seen them are no longer used — the matrix was dropped (its
   * workspace reloaded or forgotten) or grew into new ones: the workers, and this thread's fallback, let go of its
   * kernel and of those buffers. A part of it still queued is scanned first (a worker reads its messages in order);
   * one sent later only makes a worker build the kernel again.
   */
  retire(id: number): void {
    this.inlineDots.delete(id);
    if (this.closed) return;
    this.stats.retired++;
    for (const slot of this.slots) if (!slot.dead) slot.worker.postMessage({ retire: id });
  }

  /** Terminates the workers; queued parts fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const q of this.queue.splice(0)) q.reject(new Error('the scan pool is closed'));
    for (const slot of this.slots) slot.job?.reject(new Error('the scan pool is closed'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  /** For tests: the workers' thread ids. */
  workerThreadIds(): number[] {
    return this.slots.map((s) => s.worker.threadId);
  }

  /** For tests: terminate a worker as a crash would end it. */
  async crashWorker(index: number): Promise<void> {
    await this.slots[index]!.worker.terminate();
  }

  private dispatch(): void {
    if (this.slots.every((s) => s.dead)) {
      for (const entry of this.queue.splice(0)) this.runHere(entry);
      return;
    }
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job || slot.dead) continue;
      const next = this.queue.shift()!;
      slot.job = next;
      slot.worker.postMessage({ ...next.job, slot: slot.index + 1 });
    }
  }

  private spawn(index: number): Slot {
    const worker = startScanWorker();
    worker.unref();
    const slot: Slot = { index, worker, job: null, dead: false };
    worker.on('message', (msg: { result?: PartOutcome; error?: string }) => {
      const current = slot.job;
      slot.job = null;
      if (current) {
        if (msg.result) {
          if ('ranked' in msg.result) this.stats.rankedInWorkers++;
          else this.stats.prescansReturned++;
          current.resolve(msg.result);
        }
        else current.reject(new Error(`vector scan failed: ${msg.error}`));
      }
      this.dispatch();
    });
    worker.on('error', () => { /* 'exit' follows and handles it */ });
    worker.on('exit', () => {
      if (this.closed || this.slots[index] !== slot) return;
      const current = slot.job;
      slot.job = null;
      if (current) this.runHere(current);
      if (this.respawns++ < MAX_RESPAWNS) this.slots[index] = this.spawn(index);
      else slot.dead = true;
      this.dispatch();
    });
    return slot;
  }

  /**
   * A part whose worker died, pre-scanned in this thread (slot 0 is this thread's scratch space); the caller re-ranks
   * it here too.
   */
  private runHere(entry: Entry): void {
    try {
      const { buffers } = entry.job;
      const id = (buffers as { id?: number }).id ?? 0;
      let dots = this.inlineDots.get(id);
      if (!dots) {
        dots = int8Dots(buffers.memory);
        this.inlineDots.set(id, dots);
      }
      entry.resolve({ prescan: scanPart({ ...entry.job, slot: 0 }, dots) });
    } catch (err) {
      entry.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

/** Starts scan-worker in a thread (bundled once from TypeScript sources: see start-worker.ts). */
function startScanWorker(): Worker {
  return startWorker(new URL('./scan-worker.ts', import.meta.url), new URL('./scan-worker.js', import.meta.url),
    { external: ['better-sqlite3'] });
}
