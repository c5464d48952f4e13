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

const kernels = new Map<number, { generation: number; dots: DotsFn }>();
const MAX_KERNELS = 256;

function kernelFor(job: Job): DotsFn {
  const { id, generation, memory } = job.buffers;
  const cached = kernels.get(id);
  if (cached && cached.generation === generation) return cached.dots;
  if (kernels.size >= MAX_KERNELS) kernels.clear();
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

parentPort!.on('message', (job: Job) => {
  try {
    parentPort!.postMessage({ result: outcome(job, scanPart(job, kernelFor(job))) });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
