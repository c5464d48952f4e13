import type { Embedder } from '../core/embeddings/embedder.port.ts';
import { coveredBy } from '../core/embeddings/reindex.ts';
import type { MemoryMaintenance } from '../core/memories/memory-maintenance.ts';

/** What `/health` says of the embeddings: the model, and whether every memory has a vector of it. */
export interface EmbeddingsHealth {
  model: string;
  dimensions: number;
  /**
   * `complete`: every memory has a vector of this model; `needed`: some have none (the store was filled with another
   * model, or a reindex is under way or stopped): semantic search ranks only the memories that have one, until
   * `mnemo reindex` completes. Null when the store did not answer.
   */
  reindex: { state: 'complete' | 'needed'; done: number; total: number } | null;
  /** Vectors of other models in the store (a reindex's old or new model). */
  other_models: { model: string; dimensions: number; vectors: number }[];
}

/**
 * Counting every memory's vectors is a scan, and health probes come every few seconds: an answer is reused for 100
 * times as long as it took to count (at most this long), so the counts cost the store about 1 % of its time at worst,
 * and a small store's answer is fresh.
 */
export const EMBEDDINGS_HEALTH_MAX_AGE_MS = 10_000;
const REUSE_FACTOR = 100;

export function embeddingsHealth(memories: Pick<MemoryMaintenance, 'vectorCoverage'>, embedder: Embedder, now = () => Date.now()): () => Promise<EmbeddingsHealth> {
  let cached: { until: number; value: Promise<EmbeddingsHealth> } | null = null;
  const read = async (): Promise<EmbeddingsHealth> => {
    const base = { model: embedder.modelId, dimensions: embedder.dimensions };
    try {
      const coverage = await memories.vectorCoverage({});
      const done = coveredBy(coverage, embedder.modelId, embedder.dimensions);
      return {
        ...base,
        reindex: { state: done >= coverage.memories ? 'complete' : 'needed', done, total: coverage.memories },
        other_models: coverage.models.filter((m) => m.modelId !== embedder.modelId || m.dims !== embedder.dimensions)
          .map((m) => ({ model: m.modelId, dimensions: m.dims, vectors: m.vectors })),
      };
    } catch {
      cached = null;
      return { ...base, reindex: null, other_models: [] };
    }
  };
  return () => {
    if (cached && now() < cached.until) return cached.value;
    const started = now();
    const entry = { until: Infinity, value: read() };
    // Concurrent probes share the count under way; afterwards it is reused for a while.
    void entry.value.then(() => { entry.until = now() + Math.min(EMBEDDINGS_HEALTH_MAX_AGE_MS, (now() - started) * REUSE_FACTOR); });
    cached = entry;
    return entry.value;
  };
}
