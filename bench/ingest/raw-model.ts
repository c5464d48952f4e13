import { Worker } from 'node:worker_threads';

/**
 * The bundled model on its own, in worker threads (raw-model.worker.js), with no server, queue or HTTP around it:
 * the yardstick for Mnemo's ingest with the local model. Each thread embeds batches back to back.
 */
export interface RawModel {
  /** Texts per second over `ms`, using the first `threads` workers, `batch` texts per model call. */
  throughput(threads: number, batch: number, ms: number): Promise<number>;
  close(): Promise<void>;
}

export async function startRawModel(threads: number, texts: readonly string[]): Promise<RawModel> {
  const workers = await Promise.all(Array.from({ length: threads }, () => new Promise<Worker>((resolve, reject) => {
    const worker = new Worker(new URL('./raw-model.worker.js', import.meta.url), { execArgv: [] });
    worker.once('message', () => resolve(worker));
    worker.once('error', reject);
  })));
  let cursor = 0;
  const embed = (worker: Worker, batch: string[]) => new Promise<void>((resolve, reject) => {
    const fail = (err: Error) => reject(err);
    worker.once('error', fail);
    worker.once('message', () => {
      worker.off('error', fail);
      resolve();
    });
    worker.postMessage({ texts: batch });
  });
  return {
    async throughput(count, batch, ms) {
      let done = 0;
      const started = performance.now();
      await Promise.all(workers.slice(0, count).map(async (worker) => {
        while (performance.now() - started < ms) {
          const slice = Array.from({ length: batch }, () => texts[cursor++ % texts.length]!);
          await embed(worker, slice);
          done += slice.length;
        }
      }));
      return done / ((performance.now() - started) / 1000);
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
