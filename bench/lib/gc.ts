import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** `global.gc` without asking the caller to pass --expose-gc: set the flag, then fetch gc from a fresh context. */
setFlagsFromString('--expose-gc');
const gcFn = runInNewContext('gc') as () => void;

/** Full collections until the heap stops shrinking (large typed arrays can take two passes). */
export function forceGc(): void {
  let before = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 4; i++) {
    gcFn();
    const used = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    if (used >= before) return;
    before = used;
  }
}

/** heapUsed + arrayBuffers after a full collection, in bytes: what a live data structure costs. */
export function liveBytes(): number {
  forceGc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
