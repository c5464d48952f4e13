import { createLocalEmbedder, type LocalEmbedder } from '../../src/adapters/embeddings/local/local.embedder.ts';

/**
 * The bundled model for tests that need its answers but test nothing of the embedder itself (retrieval quality,
 * search floors): one worker per test process, loaded on first use and shared by every such file the process runs
 * (`isolate: false` in vitest.config.ts). Each worker started loads the model, about 2 s of CPU; one worker gives the
 * same vectors as several (one text per model call). Never closed by a file: its idle worker is unreferenced
 * (embed-worker.host.ts), so the process ends with it. The embedder's own behaviour, closing included, is
 * test/embeddings/local.embedder.test.ts's, on embedders of its own.
 */
const KEY = Symbol.for('mnemo.test.sharedLocalModel');
const store = globalThis as Record<symbol, LocalEmbedder | undefined>;

/** A view of the process's shared model whose close() leaves it loaded for the next file. */
export function sharedLocalModel(): LocalEmbedder {
  const model = (store[KEY] ??= createLocalEmbedder({ workers: 1 }));
  return {
    modelId: model.modelId,
    dimensions: model.dimensions,
    embed: (texts, options) => model.embed(texts, options),
    warmup: () => model.warmup(),
    stats: () => model.stats(),
    close: async () => undefined,
  };
}
