import { RELEVANT_SCORE } from './score-calibration.ts';

/**
 * Hybrid search's relevance floor (docs/api.md, G3 "/hybrid"; measured in BENCHMARKS.md, "Hybrid's relevance floor").
 *
 * The fused score orders a hybrid answer, but it cannot say whether a memory is relevant at all: it is a weighted
 * mean, so a memory that is an excellent semantic match and holds none of the query's words scores 0.7 × 0.9 = 0.63,
 * and one that holds a single incidental word of the query scores high whenever nothing better exists. Whether a
 * candidate is kept is decided instead by its **relevance**, on the calibrated similarity scale of every other
 * threshold (score-calibration.ts: 0.7 means relevant), from the two signals and their agreement:
 *
 *   relevance = 1 − (1 − similarity) · (1 − coverage²)
 *
 * - `similarity`, the calibrated similarity: with no keyword evidence the relevance is the similarity itself, so the
 *   floor keeps exactly what semantic search keeps at the same threshold;
 * - `coverage`, the keyword evidence: the share of the idf of the query's informative words (query-terms.ts: stop
 *   words and one-letter words never count) that the memory holds. Squared, so that partial coverage counts for
 *   little (one word of three, or a word matched only through its stem, "paged" ~ "page") and full coverage counts
 *   fully: a memory holding every informative word of the query ("Europcar", "RX-48213") is relevant whatever the
 *   model makes of the words;
 * - agreement: the evidence combines as independent chances of relevance (a noisy OR), so two signals that each fall
 *   short can together reach the floor (similarity 0.65 and coverage 0.5: relevance 0.74) while neither alone does.
 *
 * Relevance never decreases when either signal grows and is never below the similarity (search.service.ts relies on
 * both to prune: a memory without a keyword match is relevant exactly when its similarity reaches the floor).
 */
export function hybridRelevance(similarity: number, coverage: number): number {
  const s = similarity < 0 ? 0 : similarity > 1 ? 1 : similarity;
  const c = coverage < 0 ? 0 : coverage > 1 ? 1 : coverage;
  return 1 - (1 - s) * (1 - c * c);
}

/**
 * The default hybrid threshold of every surface (G3 `/hybrid`, G2 `search_mode: hybrid`, MCP `memory_search`, the
 * dashboard): the calibrated score that means relevant, the same number as semantic search's default, so that both
 * defaults mean the same thing. 0 turns the floor off (every pooled candidate is kept).
 */
export const HYBRID_DEFAULT_THRESHOLD = RELEVANT_SCORE;
