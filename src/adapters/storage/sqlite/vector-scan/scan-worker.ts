import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { openStoredVectors, type OpenStoredVectors } from '../sqlite-stored-vectors.ts';
import { runAtBackgroundPriority } from './background-priority.ts';
import { int8Dots, type DotsFn } from './int8-dot-kernel.ts';
import { rerank, type PartOutcome, type Prescan, type StoreRef } from './rerank.ts';
import { scanPart, type PartJob } from './scan-part.ts';

/**
 * A scan worker: answers each PartJob posted by the ScanPool with the part's pre-scan (scan-part.ts) and, when the
 * job names a store file, re-ranks the part itself from the vectors read on its own read-only connection to that file
 * (rerank.ts), so that the event loop only merges. The matrix's memory is shared, so nothing is copied; a kernel
 * instance is kept per matrix memory (instantiating costs more than a small scan), a connection per store file. It
 * runs below the event loop's priority (background-priority.ts).
 */
type Job = PartJob & { buffers: PartJob['buffers'] & { id: number; generation: number }; store?: StoreRef | null };

/**
 * Kernel instances by matrix id, least recently used first. An instance keeps its matrix's memory alive in this
 * thread, so a matrix the pool retires (its workspace reloaded or dropped: ScanPool.retire) is let go at once, and
 * the cache holds at most MAX_KERNELS: keeping every matrix seen kept each reloaded workspace's old memory in every
 * worker.
 */
const kernels = new Map<number, { generation: number; dots: DotsFn }>();
const MAX_KERNELS = 16;

function kernelFor(job: Job): DotsFn {
  const { id, generation, memory } = job.buffers;
  const cached = kernels.get(id);
  kernels.delete(id);
  if (cached && cached.generation === generation) {
    kernels.set(id, cached);
    return cached.dots;
  }
  while (kernels.size >= MAX_KERNELS) kernels.delete(kernels.keys().next().value!);
  const dots = int8Dots(memory);
  kernels.set(id, { generation, dots });
  return dots;
}

/** Open connections by file (a process usually has one store; tests open many, hence the bound). */
const stores = new Map<string, OpenStoredVectors>();
const MAX_STORES = 4;

function storeFor(file: string): OpenStoredVectors {
  let store = stores.get(file);
  if (store) {
    // Most recently used last.
    stores.delete(file);
    stores.set(file, store);
    return store;
  }
  if (stores.size >= MAX_STORES) {
    const [oldest, open] = stores.entries().next().value as [string, OpenStoredVectors];
    stores.delete(oldest);
    open.close();
  }
  store = openStoredVectors(file);
  stores.set(file, store);
  return store;
}

/**
 * The part re-ranked here, or its pre-scan when the store cannot be read from this thread (the file cannot be opened,
 * a read fails): the calling thread then re-ranks it on its own connection, as it would without a store.
 */
function outcome(job: Job, prescan: Prescan): PartOutcome {
  if (!job.store) return { prescan };
  try {
    const store = storeFor(job.store.file);
    const source = store.source(job.store);
    return { ranked: store.snapshot(() => rerank([prescan], job.k, job.minCosine, job.query, source)) };
  } catch {
    const open = stores.get(job.store.file);
    stores.delete(job.store.file);
    try { open?.close(); } catch { /* already unusable */ }
    return { prescan };
  }
}

runAtBackgroundPriority();

/**
 * A full collection of this thread's heap, run when a matrix is retired. Every job brings the matrix's shared buffers
 * as new objects of this heap, and while any of them lives the matrix's memory stays mapped; this thread allocates
 * too little for V8 to collect on its own (shared memory of another thread does not count towards its limits), so
 * without it every reloaded workspace's old matrix stayed in every worker and RSS grew without end (BENCHMARKS.md,
 * "Scan threads and discarded indexes"). V8 gives the collector only under `--expose-gc`, which may be set
 * once the process runs (V8 flags are process-wide; this one only adds the function to new contexts).
 */
const collectGarbage = ((): (() => void) | null => {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return null;
  }
})();

/** A matrix the pool will not send again (no answer: the pool does not wait for one). */
interface Retire {
  retire: number;
}

parentPort!.on('message', (job: Job | Retire) => {
  if ('retire' in job) {
    kernels.delete(job.retire);
    collectGarbage?.();
    return;
  }
  try {
    parentPort!.postMessage({ result: outcome(job, scanPart(job, kernelFor(job))) });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
