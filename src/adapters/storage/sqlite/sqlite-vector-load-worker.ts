import { parentPort, workerData } from 'node:worker_threads';
import type { Scope } from '../../../core/scope.ts';
import { openReadOnly } from './sqlite-read-only.ts';
import { fillRows, type RowTarget, type SeqRange } from './sqlite-vector-rows.ts';
import { runAtBackgroundPriority } from './vector-scan/background-priority.ts';

/**
 * A cold-start loader thread: opens the store read-only, reads its share (a seq range) of one workspace's vectors of
 * one model straight into the matrix rows it was given (shared memory: fillRows), posts what it wrote and the
 * workspace version it read, and ends. Its SQLite pages, row buffers and garbage end with it, off the server's heap.
 * It runs below the event loop's priority (background-priority.ts): the event loop is compiling routes meanwhile.
 */
export interface LoadJob {
  file: string;
  scope: Scope;
  modelId: string;
  dims: number;
  range: SeqRange;
  target: RowTarget;
}

/**
 * Memory-mapped reads skip a copy of every page (the mapping goes with the connection), so the page cache can be
 * small: every page is read once.
 */
const MMAP_BYTES = 1 << 30;
const CACHE_KIB = 256;

runAtBackgroundPriority();
const job = workerData as LoadJob;
const db = openReadOnly(job.file, { mmapBytes: MMAP_BYTES, cacheKiB: CACHE_KIB });
try {
  parentPort!.postMessage(fillRows(db, job.scope, job.modelId, job.dims, job.range, job.target));
} finally {
  db.close();
}
