import { parentPort } from 'node:worker_threads';
import { int8Dots, type DotsFn } from './int8-dot-kernel.ts';
import { scanPart, type PartJob } from './scan-part.ts';

/**
 * A scan worker: answers each PartJob posted by the ScanPool with the part's pre-scan (scan-part.ts). The matrix's
 * memory is shared, so nothing is copied; a kernel instance is kept per matrix memory (instantiating costs more than
 * a small scan).
 */
type Job = PartJob & { buffers: PartJob['buffers'] & { id: number; generation: number } };

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

parentPort!.on('message', (job: Job) => {
  try {
    parentPort!.postMessage({ result: scanPart(job, kernelFor(job)) });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
