import { createHashingEmbedder } from '../adapters/embeddings/hashing.embedder.ts';
import { createLocalEmbedder } from '../adapters/embeddings/local/local.embedder.ts';
import { createOpenAiEmbedder } from '../adapters/embeddings/openai.embedder.ts';
import type { Embedder } from '../core/embeddings/embedder.port.ts';
import type { Config } from './config.ts';

export function createEmbedder(config: Config['embeddings']): Embedder {
  switch (config.kind) {
    case 'local':
      return createLocalEmbedder(config.workers === undefined ? {} : { workers: config.workers });
    case 'hashing':
      return createHashingEmbedder({ dimensions: config.dimensions });
    case 'openai':
      return createOpenAiEmbedder({
        url: config.url, model: config.model, apiKey: config.apiKey, dimensions: config.dimensions,
      });
  }
}

/** Loads a model eagerly when the adapter supports it, so the first request does not pay for it. */
export async function warmUp(embedder: Embedder): Promise<void> {
  const maybe = embedder as Embedder & { warmup?: () => Promise<void> };
  if (typeof maybe.warmup === 'function') await maybe.warmup();
}
