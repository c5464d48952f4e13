import type { MnemoMetrics } from '../adapters/metrics/metrics.registry.ts';
import { RerankError, type Reranker } from '../core/search/reranker.port.ts';

/**
 * The reranker as the search service sees it, timed: every call is one observation of
 * `mnemo_rerank_duration_seconds` by outcome, so that operators see failures the searches themselves hide (a failed
 * rerank answers hybrid's own order).
 */
export function measuredReranker(inner: Reranker, metrics: Pick<MnemoMetrics, 'recordRerank'>): Reranker {
  return {
    model: inner.model,
    async rerank(query, documents, signal) {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const scores = await inner.rerank(query, documents, signal);
        metrics.recordRerank('ok', seconds());
        return scores;
      } catch (err) {
        metrics.recordRerank(signal?.aborted ? 'aborted' : err instanceof RerankError ? err.kind : 'bad_answer', seconds());
        throw err;
      }
    },
  };
}
