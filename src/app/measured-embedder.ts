import type { Embedder } from '../core/embeddings/embedder.port.ts';
import type { EmbeddingMetrics } from '../adapters/metrics/metrics.registry.ts';

/**
 * The embedder as the services see it, timed: every embed() call (whichever service makes it) is one observation of
 * `mnemo_embedding_duration_seconds`. What the adapter offers besides the port (the local model's `warmup` and
 * `stats`) is passed through, so start-up still loads the model eagerly.
 */
export function measuredEmbedder(inner: Embedder, metrics: EmbeddingMetrics): Embedder {
  const measured: Embedder = {
    // Read through: an adapter may learn its width from its first answer (OpenAI without a configured width).
    get modelId() {
      return inner.modelId;
    },
    get dimensions() {
      return inner.dimensions;
    },
    async embed(texts, options) {
      const end = metrics.start(texts.length);
      try {
        const vectors = await inner.embed(texts, options);
        end('ok');
        return vectors;
      } catch (err) {
        end('error');
        throw err;
      }
    },
    close: () => inner.close(),
  };
  const extras = inner as Embedder & { warmup?: () => Promise<void>; stats?: () => unknown };
  return Object.assign(measured,
    typeof extras.warmup === 'function' ? { warmup: () => extras.warmup!() } : {},
    typeof extras.stats === 'function' ? { stats: () => extras.stats!() } : {});
}

/** The local model's queue of texts, when the embedder has one (LocalEmbedder.stats().queued). */
export function queuedTexts(embedder: Embedder): number | undefined {
  const stats = (embedder as Embedder & { stats?: () => { queued?: number } }).stats;
  return typeof stats === 'function' ? stats.call(embedder).queued : undefined;
}
