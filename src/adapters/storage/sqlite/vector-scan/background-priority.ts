import { getPriority, setPriority } from 'node:os';

/**
 * How much lower than the event loop the vector cache's worker threads (scan, load) are scheduled: nice +10 beside the
 * event loop's. The event loop answers every request (`GET /health` among them) and does a search's own work (HTTP,
 * the query, the merge); on a machine with as many busy threads as cores it waited for a core behind the scan
 * threads. At nice +10 the kernel's fair scheduler weighs a worker about a tenth of the event loop, so the event loop
 * gets a core as soon as it has work, and the workers still use every cycle it leaves (an idle core runs them at full
 * speed). The cost: another process of the machine at normal priority also comes first, and so do this process's
 * own normal-priority threads: the local embedding model's workers, so a big workspace's scan during a heavy
 * local-model ingest yields to model inference (lowering the model threads too changed nothing measurable on a small
 * store: docs/architecture.md, "Queries first"; the hashing and remote embedders have no such threads).
 */
export const BACKGROUND_NICE_STEP = 10;
const LOWEST = 19;

/**
 * Lowers the calling worker thread's scheduling priority. Linux only: there setpriority(2) on "0" changes the calling
 * thread alone; elsewhere it would change the whole process, the event loop's thread included, so nothing is done.
 */
export function runAtBackgroundPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, Math.min(LOWEST, getPriority(0) + BACKGROUND_NICE_STEP));
  } catch {
    // Not permitted (a sandbox): the thread runs at the event loop's priority, as before.
  }
}
