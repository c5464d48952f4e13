import type { Embedder } from './embedder.port.ts';
import type { MemoryMaintenance, ScopeFilter, VectorCoverage } from '../memories/memory-maintenance.ts';

/**
 * `mnemo reindex`: gives every memory a vector of the configured model, beside the vectors it already has. The
 * store itself is what a run resumes from (a memory is done when it has a vector of the model; the run's record for
 * `/health`, reindex-record.ts, only reports), so a run that stopped —
 * Ctrl-C, SIGTERM, `--limit`, a crash — is resumed by running it again, and memories written meanwhile by a server
 * still on the old model are picked up by the next pass. Searches never mix models (each ranks the vectors of its
 * own model only), so a server on the old model keeps answering from the old vectors throughout.
 */

export interface ReindexProgress {
  /** Memories of the filter that have a vector of the model. */
  done: number;
  /** Memories of the filter. */
  total: number;
  /** Vectors written by this run so far. */
  written: number;
}

export interface ReindexOptions {
  filter: ScopeFilter;
  /** Memories embedded per embedder call and written per transaction. */
  batchSize: number;
  /** Stop after writing about this many vectors (whole batches): work in slices, run again to go on. */
  limit?: number | undefined;
  /** Aborted: the batch under way finishes, then the run stops (nothing is lost; run again to resume). */
  signal?: AbortSignal | undefined;
  onProgress?: ((p: ReindexProgress) => void) | undefined;
}

export type ReindexState = 'complete' | 'stopped' | 'limited';

export interface ReindexResult extends ReindexProgress {
  state: ReindexState;
  modelId: string;
}

/** Passes over the store at most: each later pass only meets memories re-embedded by a server while the run went on. */
const MAX_PASSES = 5;

/** Memories of `coverage` with a vector of the model (of its width: another width is another model). */
export function coveredBy(coverage: VectorCoverage, modelId: string, dims: number): number {
  return coverage.models.find((m) => m.modelId === modelId && m.dims === dims)?.vectors ?? 0;
}

export async function reindexMemories(
  memories: MemoryMaintenance,
  embedder: Embedder,
  textOf: (title: string, content: string) => string,
  options: ReindexOptions,
): Promise<ReindexResult> {
  const modelId = embedder.modelId;
  const start = await memories.vectorCoverage(options.filter);
  const progress: ReindexProgress = { done: coveredBy(start, modelId, embedder.dimensions), total: start.memories, written: 0 };
  options.onProgress?.({ ...progress });
  const finish = async (state: ReindexState): Promise<ReindexResult> => {
    const end = await memories.vectorCoverage(options.filter);
    return { state, modelId, written: progress.written, done: coveredBy(end, modelId, embedder.dimensions), total: end.memories };
  };

  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let found = 0;
    for (let cursor = 0; ;) {
      if (options.signal?.aborted) return finish('stopped');
      if (options.limit !== undefined && progress.written >= options.limit) return finish('limited');
      const batch = await memories.missingVectors(modelId, options.filter, cursor, options.batchSize);
      if (batch.length === 0) break;
      found += batch.length;
      const texts = batch.map((b) => textOf(b.memory.title, b.memory.content));
      const vectors = await embedder.embed(texts);
      const written = await memories.putVectors(batch.map((b, i) => ({
        scope: b.memory.scope, id: b.memory.id, title: b.memory.title, content: b.memory.content,
        vector: { modelId, vector: vectors[i]! },
      })));
      progress.written += written;
      progress.done += written;
      // Memories written or deleted meanwhile move the total; done never passes it.
      progress.done = Math.min(progress.done, progress.total);
      options.onProgress?.({ ...progress });
      cursor = batch[batch.length - 1]!.cursor;
    }
    if (found === 0) return finish('complete');
  }
  // Memories keep being re-embedded by a server on another model faster than this run catches up.
  return finish('stopped');
}
