import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/scope.ts';
import { HYBRID_DEFAULT_THRESHOLD, hybridRelevance } from '../../src/core/search/relevance.ts';
import type { ScoredHit, SearchContext } from '../../src/core/search/search.service.ts';
import { actor, createServices, freshScope, type Services } from './support.ts';

/**
 * Hybrid search's relevance floor (src/core/search/relevance.ts) and the query terms of the keyword leg, on a small
 * corpus embedded by the hashing embedder (uncalibrated: similarity = (1 + cosine) / 2). Expected similarities and
 * coverages are computed here, independently of the service.
 */
const CORPUS = [
  ['Rust ownership', 'The borrow checker enforces ownership rules in rust programs'],
  ['Garbage collection', 'Java and go use a garbage collector instead of ownership'],
  ['Cooking pasta', 'Boil water, add salt, cook pasta for nine minutes'],
  ['Ownership of land', 'ownership ownership ownership of houses and land'],
  ['Borrowing books', 'The library lets you borrow books for three weeks'],
  ['Checker games', 'Checkers is a board game; the checker pieces move diagonally'],
] as const;
/** Stop words ("what", "is", "the", "of", "and") and one-letter words ("a") never count. */
const QUERY = 'what is the rust borrow checker of a ownership and';
/** Which corpus memories (by index) hold each informative query word once stemmed. */
const HOLDERS: Record<string, number[]> = { rust: [0], borrow: [0, 4], checker: [0, 5], ownership: [0, 1, 3] };
const idf = (holding: number) => Math.max(1e-6, Math.log((CORPUS.length - holding + 0.5) / (holding + 0.5)));
function coverageOf(index: number): number {
  const mass = Object.values(HOLDERS).reduce((sum, h) => sum + idf(h.length), 0);
  return Object.values(HOLDERS).filter((h) => h.includes(index)).reduce((sum, h) => sum + idf(h.length), 0) / mass;
}
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const titles = (hits: readonly ScoredHit[]) => hits.map((h) => h.memory.title);

describe('hybrid relevance floor', () => {
  let s: Services;
  let scope: Scope;
  let ctx: SearchContext;
  /** Per title: similarity, coverage, relevance and fused score (weights 0.7 / 0.3, rerank true). */
  const expected = new Map<string, { similarity: number; coverage: number; relevance: number; fused: number }>();

  beforeAll(async () => {
    s = createServices();
    scope = freshScope();
    ctx = { scope, userId: 'alice', surface: 'test' };
    const [q] = await s.embedder.embed([QUERY]);
    for (const [i, [title, content]] of CORPUS.entries()) {
      await s.memories.create(scope, actor(scope, 'alice'), { title, content });
      const [v] = await s.embedder.embed([s.memories.embeddingText(title, content)]);
      const similarity = (1 + dot(q!, v!)) / 2;
      const coverage = coverageOf(i);
      expected.set(title, { similarity, coverage, relevance: hybridRelevance(similarity, coverage), fused: 0.7 * similarity + 0.3 * coverage });
    }
  });
  afterAll(() => s.close());

  const hybrid = (threshold: number | undefined, limit = 10) =>
    s.search.hybrid(ctx, { query: QUERY, limit, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3, threshold });
  /** The titles whose relevance reaches `floor`, by fused score (ties: similarity). */
  const kept = (floor: number) => [...expected.entries()].filter(([, e]) => e.relevance >= floor)
    .sort((a, b) => b[1].fused - a[1].fused || b[1].similarity - a[1].similarity).map(([t]) => t);

  it('keeps what the relevance reaches, in the fused order; total counts them', async () => {
    const relevances = [...expected.values()].map((e) => e.relevance).sort((a, b) => b - a);
    // Floors between the relevances, so no memory sits on one.
    for (let i = 0; i < relevances.length; i++) {
      const floor = i === relevances.length - 1 ? 0 : (relevances[i]! + relevances[i + 1]!) / 2;
      const want = kept(floor);
      const all = await hybrid(floor);
      expect(titles(all.hits), `floor ${floor}`).toEqual(want);
      expect(all.total, `floor ${floor}`).toBe(want.length);
      for (const h of all.hits) expect(h.score).toBeCloseTo(expected.get(h.memory.title)!.fused, 6);
      // The best two, as the whole answer ranks them (`total` then counts the pooled candidates: docs/api.md).
      expect(titles((await hybrid(floor, 2)).hits), `floor ${floor}`).toEqual(want.slice(0, 2));
    }
  });

  it('floors at the calibrated default when no threshold is given; 0 keeps every candidate', async () => {
    expect(titles((await hybrid(undefined)).hits)).toEqual(kept(HYBRID_DEFAULT_THRESHOLD));
    expect((await hybrid(0)).hits).toHaveLength(CORPUS.length);
  });

  it('keeps a memory holding every informative word of the query whatever its similarity', async () => {
    // Alone in the corpus with "diagonally" (coverage 1): kept at any floor, though the hashing model rates it low.
    const out = await s.search.hybrid(ctx, { query: 'what moves diagonally?', limit: 10, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3, threshold: 0.99 });
    expect(titles(out.hits)).toEqual(['Checker games']);
    expect(out.hits[0]!.similarity!).toBeLessThan(0.7);
  });

  it('ranks no keyword match for a query of stop words and one-letter words', async () => {
    for (const query of ['I', 'do', 'what do I do?']) {
      const keyword = await s.search.keyword(ctx, { query, limit: 10, filter: {} });
      expect(keyword, query).toMatchObject({ hits: [], total: 0 });
      const out = await s.search.hybrid(ctx, { query, limit: 10, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3, threshold: 0 });
      expect(out.keywordResults, query).toBe(0);
      for (const h of out.hits) expect(h.keywordScore).toBe(0);
    }
  });
});
