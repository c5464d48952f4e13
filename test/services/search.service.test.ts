import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainError } from '../../src/core/errors.ts';
import type { Scope } from '../../src/core/scope.ts';
import type { CosineEstimate, MemoryRef } from '../../src/core/memories/memory.types.ts';
import { createSearchService, HYBRID_METHOD_PLAIN, HYBRID_METHOD_RERANK, type ScoredHit, type SearchContext } from '../../src/core/search/search.service.ts';
import { hybridRelevance } from '../../src/core/search/relevance.ts';
import { createServices, freshScope, actor, type Services } from './support.ts';

/**
 * SearchService over a small corpus embedded by the hashing embedder. Expected similarities are computed here from
 * the embedder's own vectors (they are unit length, so cosine is a dot product), independently of the service.
 */
const CORPUS = [
  ['Rust ownership', 'The borrow checker enforces ownership rules in rust programs'],
  ['Garbage collection', 'Java and go use a garbage collector instead of ownership'],
  ['Cooking pasta', 'Boil water, add salt, cook pasta for nine minutes'],
  ['Ownership of land', 'ownership ownership ownership of houses and land'],
  ['Borrowing books', 'The library lets you borrow books for three weeks'],
  ['Checker games', 'Checkers is a board game; the checker pieces move diagonally'],
] as const;
const QUERY = 'rust borrow checker ownership';
/** Which corpus memories (by index) hold each query word once stemmed (Borrowing -> borrow, Checkers -> checker). */
const HOLDERS: Record<string, number[]> = { rust: [0], borrow: [0, 4], checker: [0, 5], ownership: [0, 1, 3] };
/** BM25's idf as SQLite computes it, over the scope's 6 memories, floored at 1e-6. */
const idf = (holding: number) => Math.max(1e-6, Math.log((CORPUS.length - holding + 0.5) / (holding + 0.5)));
/** Expected keyword coverage of each corpus title: the share of the query's idf mass its words hold. */
function coverageOf(index: number): number {
  const mass = Object.values(HOLDERS).reduce((sum, h) => sum + idf(h.length), 0);
  return Object.values(HOLDERS).filter((h) => h.includes(index)).reduce((sum, h) => sum + idf(h.length), 0) / mass;
}

const titles = (hits: readonly ScoredHit[]) => hits.map((h) => h.memory.title);
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describe('SearchService', () => {
  let s: Services;
  let scope: Scope;
  let ctx: SearchContext;
  /** Expected similarity `(1 + cosine) / 2` of each corpus title to QUERY. */
  const similarity = new Map<string, number>();

  beforeAll(async () => {
    s = createServices();
    scope = freshScope();
    ctx = { scope, userId: 'alice', surface: 'test' };
    const [q] = await s.embedder.embed([QUERY]);
    for (const [title, content] of CORPUS) {
      await s.memories.create(scope, actor(scope, 'alice'), { title, content });
      const [v] = await s.embedder.embed([s.memories.embeddingText(title, content)]);
      similarity.set(title, (1 + dot(q!, v!)) / 2);
    }
  });
  afterAll(() => s.close());

  const bySimilarity = () => [...similarity.entries()].sort((a, b) => b[1] - a[1]);

  describe('semantic', () => {
    it('ranks every memory by similarity and shows the similarity as the score', async () => {
      const out = await s.search.semantic(ctx, { query: QUERY, limit: 10, threshold: 0, filter: {} });
      expect(titles(out.hits)).toEqual(bySimilarity().map(([t]) => t));
      for (const h of out.hits) {
        expect(h.score).toBeCloseTo(similarity.get(h.memory.title)!, 5);
        expect(h.similarity).toBe(h.score);
        expect(h.cosine).toBeCloseTo(2 * h.score - 1, 5);
      }
      expect(out.total).toBe(CORPUS.length);
      expect(out.embeddingModel).toBe(s.embedder.modelId);
    });

    it('drops memories under the threshold; total counts all that qualify, hits at most limit of them', async () => {
      const ranked = bySimilarity();
      // A threshold between the third and the fourth best.
      const threshold = (ranked[2]![1] + ranked[3]![1]) / 2;
      const out = await s.search.semantic(ctx, { query: QUERY, limit: 2, threshold, filter: {} });
      expect(titles(out.hits)).toEqual(ranked.slice(0, 2).map(([t]) => t));
      expect(out.total).toBe(3);
    });

    it('applies filters and sees only the caller\'s scope', async () => {
      const filtered = await s.search.semantic(ctx, { query: QUERY, limit: 10, threshold: 0, filter: { createdFrom: new Date(s.clock.now().getTime() + 1) } });
      expect(filtered).toMatchObject({ hits: [], total: 0 });
      const other = await s.search.semantic({ ...ctx, scope: freshScope() }, { query: QUERY, limit: 10, threshold: 0, filter: {} });
      expect(other).toMatchObject({ hits: [], total: 0 });
    });

    it('refuses an empty query', async () => {
      const e = await s.search.semantic(ctx, { query: '  ', limit: 10, threshold: 0, filter: {} }).catch((err: DomainError) => err);
      expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { fields: [{ field: 'query', message: 'must not be empty' }] } });
    });
  });

  describe('keyword', () => {
    it('returns only memories with a query word, best BM25 first, normalised so the best scores 1', async () => {
      const out = await s.search.keyword(ctx, { query: QUERY, limit: 10, filter: {} });
      const matching = CORPUS.filter(([t, c]) => /\b(rust|borrow|checker|ownership)\b/i.test(`${t} ${c}`)).map(([t]) => t);
      expect(titles(out.hits).sort()).toEqual([...matching].sort());
      expect(out.total).toBe(matching.length);
      // "Rust ownership" holds all four words, the rest fewer.
      expect(out.hits[0]!.memory.title).toBe('Rust ownership');
      expect(out.hits[0]!.score).toBe(1);
      const scores = out.hits.map((h) => h.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      for (const h of out.hits) expect(h.keywordScore).toBe(h.score);
      const limited = await s.search.keyword(ctx, { query: QUERY, limit: 2, filter: {} });
      expect(limited.hits).toHaveLength(2);
      expect(limited.total).toBe(matching.length);
    });
  });

  describe('hybrid', () => {
    // No relevance floor unless a test asks for one: these test the fused ranking (the floor: search-floor.service.test.ts).
    const hybrid = (weights: { semanticWeight: number; keywordWeight: number }, more: { rerank?: boolean; threshold?: number; limit?: number } = {}) =>
      s.search.hybrid(ctx, { query: QUERY, limit: more.limit ?? 10, filter: {}, rerank: more.rerank ?? false, threshold: more.threshold ?? 0, ...weights });

    /** The keyword leg's normalised scores and 1-based ranks, as the keyword search reports them. */
    async function keywordLeg(): Promise<Map<string, { score: number; rank: number }>> {
      const out = await s.search.keyword(ctx, { query: QUERY, limit: 50, filter: {} });
      return new Map(out.hits.map((h, i) => [h.memory.title, { score: h.score, rank: i + 1 }]));
    }

    it('weighted sum: the score is (sw * similarity + kw * keyword) / (sw + kw), best first', async () => {
      const kw = await keywordLeg();
      const out = await hybrid({ semanticWeight: 0.7, keywordWeight: 0.3 });
      expect(out.method).toBe(HYBRID_METHOD_PLAIN);
      expect(out.hits).toHaveLength(CORPUS.length); // keyword-only or semantic-only: every memory is a candidate
      for (const h of out.hits) {
        const expected = 0.7 * similarity.get(h.memory.title)! + 0.3 * (kw.get(h.memory.title)?.score ?? 0);
        expect(h.score).toBeCloseTo(expected, 5);
        expect(h.similarity).toBeCloseTo(similarity.get(h.memory.title)!, 5);
        expect(h.keywordScore).toBeCloseTo(kw.get(h.memory.title)?.score ?? 0, 5);
      }
      const scores = out.hits.map((h) => h.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(out.keywordResults).toBe(kw.size);
      expect(out.semanticResults).toBe(CORPUS.length);
    });

    it('weights are relative: only their ratio counts, and one weight alone gives that leg\'s order', async () => {
      const half = await hybrid({ semanticWeight: 0.5, keywordWeight: 0.5 });
      const doubled = await hybrid({ semanticWeight: 2, keywordWeight: 2 });
      expect(doubled.hits.map((h) => [h.memory.title, h.score])).toEqual(half.hits.map((h) => [h.memory.title, h.score]));

      const semanticOnly = await hybrid({ semanticWeight: 1, keywordWeight: 0 });
      expect(titles(semanticOnly.hits)).toEqual(bySimilarity().map(([t]) => t));
      for (const h of semanticOnly.hits) expect(h.score).toBeCloseTo(similarity.get(h.memory.title)!, 5);

      const kw = await keywordLeg();
      const keywordOnly = await hybrid({ semanticWeight: 0, keywordWeight: 1 });
      const positive = [...kw.entries()].filter(([, k]) => k.score > 0).map(([t]) => t);
      expect(titles(keywordOnly.hits).slice(0, positive.length)).toEqual(positive);
      for (const h of keywordOnly.hits) expect(h.score).toBeCloseTo(kw.get(h.memory.title)?.score ?? 0, 5);
    });

    it('rerank scores by (sw * similarity + kw * keyword coverage) / (sw + kw), best first', async () => {
      for (const [sw, kwWeight] of [[0.5, 0.5], [0.9, 0.1], [0.2, 0.8], [1, 3]] as const) {
        const out = await hybrid({ semanticWeight: sw, keywordWeight: kwWeight }, { rerank: true });
        expect(out.method).toBe(HYBRID_METHOD_RERANK);
        const expected = new Map<string, number>(CORPUS.map(([t], i) => [t, (sw * similarity.get(t)! + kwWeight * coverageOf(i)) / (sw + kwWeight)]));
        expect(titles(out.hits)).toEqual([...expected.entries()].sort((a, b) => b[1] - a[1]).map(([t]) => t));
        for (const h of out.hits) expect(h.score).toBeCloseTo(expected.get(h.memory.title)!, 6);
      }
    });

    it('rerank differs from the plain sum: a weak keyword match counts by its coverage, not relative to the best', async () => {
      // Only "borrow" matches (2 of 6 memories); "zebra" and "quantum" are in none, so they hold most of the idf mass.
      const query = 'borrow zebra quantum';
      const run = (rerank: boolean) => s.search.hybrid(ctx, { query, limit: 10, filter: {}, rerank, semanticWeight: 0.5, keywordWeight: 0.5, threshold: 0 });
      const absent = idf(0);
      const coverage = idf(2) / (idf(2) + 2 * absent);
      const plain = await run(false);
      const reranked = await run(true);
      const books = (hits: readonly ScoredHit[]) => hits.find((h) => h.memory.title === 'Borrowing books')!;
      expect(books(plain.hits).keywordScore).toBeGreaterThan(0.9); // relative to the best keyword hit: about 1
      expect(books(reranked.hits).score).toBeCloseTo(0.5 * books(reranked.hits).similarity! + 0.5 * coverage, 6);
      expect(coverage).toBeLessThan(0.15);
    });

    it('threshold is a floor on the relevance (relevance.ts), not the fused score; total counts the candidates at or above it', async () => {
      const all = await hybrid({ semanticWeight: 0.5, keywordWeight: 0.5 });
      const relevance = new Map<string, number>(CORPUS.map(([t], i) => [t, hybridRelevance(similarity.get(t)!, coverageOf(i))]));
      const ranked = [...relevance.values()].sort((a, b) => b - a);
      const floor = (ranked[2]! + ranked[3]!) / 2;
      const out = await hybrid({ semanticWeight: 0.5, keywordWeight: 0.5 }, { threshold: floor, limit: 2 });
      const kept = titles(all.hits).filter((t) => relevance.get(t)! >= floor);
      expect(titles(out.hits)).toEqual(kept.slice(0, 2));
      expect(out.total).toBe(3);
      expect(out.semanticResults).toBe([...similarity.values()].filter((v) => v >= floor).length);
    });
  });

  describe('hybrid reads rows for the kept hits only', () => {
    /**
     * A search service over `s`'s store whose repository notes the ids of every findByRefs and can act just before
     * one (given the ids about to be read).
     */
    function watched(beforeRead: (ids: readonly string[]) => Promise<void> = async () => undefined) {
      const reads: string[][] = [];
      const memories = new Proxy(s.storage.memories, {
        get(target, name, receiver) {
          if (name === 'findByRefs') {
            return async (scope: Scope, refs: readonly MemoryRef[]) => {
              const rows = await target.findByRefs(scope, refs);
              const ids = refs.map((r) => rows.get(r)?.id ?? '<gone>');
              reads.push(ids);
              await beforeRead(ids);
              return target.findByRefs(scope, refs);
            };
          }
          if (name === 'searchSimilar' || name === 'searchKeyword' || name === 'vectorsOf') {
            return () => { throw new Error(`hybrid called ${String(name)}, which reads rows or stored vectors`); };
          }
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const search = createSearchService({
        memories, searchLog: s.storage.searchLog, events: s.storage.events, embedder: s.embedder, clock: s.clock,
        timeoutMs: 10_000, maxEmbedChars: 8000,
      });
      return { search, reads };
    }

    it('ranks its semantic leg with rankSimilar, whose caller works meanwhile (semantic search uses searchSimilar)', async () => {
      const busy: unknown[] = [];
      const memories = new Proxy(s.storage.memories, {
        get(target, name, receiver) {
          if (name === 'rankSimilar' || name === 'searchSimilar') {
            return (scope: Scope, query: unknown) => {
              busy.push(name);
              return (target[name] as (sc: Scope, q: unknown) => Promise<unknown>)(scope, query);
            };
          }
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const search = createSearchService({
        memories, searchLog: s.storage.searchLog, events: s.storage.events, embedder: s.embedder, clock: s.clock,
        timeoutMs: 10_000, maxEmbedChars: 8000,
      });
      await search.hybrid(ctx, { query: QUERY, limit: 2, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3 });
      await search.semantic(ctx, { query: QUERY, limit: 2, filter: {}, threshold: 0 });
      expect(busy).toEqual(['rankSimilar', 'searchSimilar']);
    });

    it('reads the `limit` fused best in one query, answering as the unwatched service does', async () => {
      const expected = await s.search.hybrid(ctx, { query: QUERY, limit: 2, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3 });
      const { search, reads } = watched();
      const out = await search.hybrid(ctx, { query: QUERY, limit: 2, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3 });
      expect(reads).toEqual([out.hits.map((h) => h.memory.id)]);
      expect(out.hits.map((h) => [h.memory, h.score, h.cosine, h.keywordScore])).toEqual(expected.hits.map((h) => [h.memory, h.score, h.cosine, h.keywordScore]));
      expect(out.total).toBe(expected.total);
    });

    it('runs again when a memory chosen is deleted between the ranking and the read', async () => {
      const own = freshScope();
      const ownCtx = { ...ctx, scope: own };
      for (const [title, content] of CORPUS) await s.memories.create(own, actor(own, 'alice'), { title, content });
      const input = { query: QUERY, limit: 3, filter: {}, rerank: false, semanticWeight: 0.5, keywordWeight: 0.5, threshold: 0 };
      const before = await s.search.hybrid(ownCtx, { ...input, limit: 10 });
      let victim: string | undefined;
      const { search, reads } = watched(async (ids) => {
        if (victim) return;
        victim = ids[1];
        await s.storage.memories.delete(own, victim!, { at: new Date(), by: 'test', reason: 'user_request' });
      });
      const out = await search.hybrid(ownCtx, input);
      expect(victim).toBe(before.hits[1]!.memory.id);
      expect(out.hits.map((h) => h.memory.id)).toEqual([0, 2, 3].map((i) => before.hits[i]!.memory.id));
      // The search ran again once it found a chosen memory gone: a replacement from its first pools might not be the
      // next best (the semantic leg ranks only `limit`).
      expect(reads).toEqual([before.hits.slice(0, 3).map((h) => h.memory.id), [0, 2, 3].map((i) => before.hits[i]!.memory.id)]);
      expect(out.total).toBe((await s.search.hybrid(ownCtx, input)).total);
    });

    it('after two such races, the third attempt reads the next candidate in place of the one deleted', async () => {
      const own = freshScope();
      const ownCtx = { ...ctx, scope: own };
      for (const [title, content] of CORPUS) await s.memories.create(own, actor(own, 'alice'), { title, content });
      const input = { query: QUERY, limit: 3, filter: {}, rerank: false, semanticWeight: 0.5, keywordWeight: 0.5, threshold: 0 };
      const deleted: string[] = [];
      const { search, reads } = watched(async (ids) => {
        if (deleted.length === 3) return;
        deleted.push(ids[0]!);
        await s.storage.memories.delete(own, ids[0]!, { at: new Date(), by: 'test', reason: 'user_request' });
      });
      const out = await search.hybrid(ownCtx, input);
      // Three rankings, each read once (each losing its best hit), then the third's next candidate.
      expect(reads).toHaveLength(4);
      expect(reads[3]).toHaveLength(1);
      expect(new Set(deleted).size).toBe(3);
      // The third ranking's survivors, then its next candidate (scored with the same statistics, so in order).
      expect(out.hits.map((h) => h.memory.id)).toEqual([...reads[2]!.slice(1), reads[3]![0]!]);
      for (const h of out.hits) expect(deleted).not.toContain(h.memory.id);
      expect(out.hits.map((h) => h.score)).toEqual([...out.hits.map((h) => h.score)].sort((a, b) => b - a));
    });
  });

  describe('hybrid scores exactly only the keyword-only candidates that may enter the answer', () => {
    /** 60 memories holding `deploy` (and other words), so that keyword-only candidates far outnumber `limit`. */
    const WORDS = ['friday', 'rollback', 'canary', 'database', 'lunch', 'staging', 'review', 'tokyo', 'invoice', 'garden'];
    let own: Scope;
    beforeAll(async () => {
      own = freshScope();
      for (let i = 0; i < 60; i++) {
        const words = [WORDS[i % 10]!, WORDS[(i * 7 + 3) % 10]!, WORDS[(i * 3 + 1) % 10]!];
        await s.memories.create(own, actor(own, 'alice'), {
          title: `Note ${i}`, content: `${i % 4 === 0 ? 'deploy' : 'deploys'} ${words.join(' ')} ${'x'.repeat(i % 5)} item ${i}`,
        });
      }
    });

    /**
     * A service whose store's estimates are given by `estimate` (null: none), noting the refs scored exactly; with
     * `slowScan` its semantic ranking answers 30 ms late (a big workspace's scan), noting the refs scored meanwhile.
     */
    function withEstimates(estimate: ((e: CosineEstimate) => CosineEstimate) | null, slowScan = false) {
      const scored: MemoryRef[] = [];
      const scoredDuringScan: MemoryRef[] = [];
      const readDuringScan: MemoryRef[] = [];
      const readAfterScan: MemoryRef[] = [];
      let scanning = false;
      // The slow scan answers once the estimates have been handed back and the turn that uses them has run (a
      // macrotask later), whatever the machine's load; two seconds at most.
      let release = () => undefined as void;
      const memories = new Proxy(s.storage.memories, {
        get(target, name, receiver) {
          if (name === 'rankSimilar' && slowScan) {
            return async (...args: Parameters<typeof target.rankSimilar>) => {
              scanning = true;
              const ranked = await target.rankSimilar(...args);
              await new Promise<void>((resolve) => {
                const timer = setTimeout(resolve, 2000);
                release = () => { clearTimeout(timer); resolve(); };
              });
              scanning = false;
              return ranked;
            };
          }
          if (name === 'cosineEstimatesOf') {
            return async (...[scope, refs, q, sharpen]: Parameters<typeof target.cosineEstimatesOf>) => {
              // The bounds `sharpen` is asked about are changed as the answer is.
              const changed = (bounds: ReadonlyMap<MemoryRef, CosineEstimate>) => new Map([...bounds].map(([ref, e]) => [ref, estimate!(e)]));
              const given = estimate
                ? await target.cosineEstimatesOf(scope, refs, q, sharpen && ((bounds) => sharpen(changed(bounds))))
                : new Map<MemoryRef, CosineEstimate>();
              setTimeout(() => release(), 0);
              return changed(given);
            };
          }
          if (name === 'cosinesOf') {
            return async (scope: Scope, refs: readonly MemoryRef[], q: { vector: Float32Array; modelId: string }) => {
              scored.push(...refs);
              if (scanning) scoredDuringScan.push(...refs);
              return target.cosinesOf(scope, refs, q);
            };
          }
          if (name === 'findByRefs') {
            return async (scope: Scope, refs: readonly MemoryRef[]) => {
              (scanning ? readDuringScan : readAfterScan).push(...refs);
              return target.findByRefs(scope, refs);
            };
          }
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const search = createSearchService({
        memories, searchLog: s.storage.searchLog, events: s.storage.events, embedder: s.embedder, clock: s.clock,
        timeoutMs: 10_000, maxEmbedChars: 8000,
      });
      return { search, scored, scoredDuringScan, readDuringScan, readAfterScan };
    }
    const answer = (o: Awaited<ReturnType<Services['search']['hybrid']>>) => ({
      hits: o.hits.map((h) => [h.memory.id, h.score, h.similarity, h.cosine, h.keywordScore]),
      total: o.total, semanticResults: o.semanticResults, keywordResults: o.keywordResults,
    });

    /**
     * A service whose semantic ranking answers only once `scanAnswers` has settled (never without it, unless
     * `failScan` is called), and whose estimates are handed back only after `beforeEstimates` ran; the refs scored
     * exactly and the rows read are noted.
     */
    function stalled(timeoutMs: number, beforeEstimates: (failScan: (err: Error) => void) => Promise<void>,
      scanAnswers?: () => Promise<unknown>) {
      const scored: MemoryRef[] = [];
      const read: MemoryRef[] = [];
      let failScan: (err: Error) => void = () => undefined;
      let estimated = false;
      const memories = new Proxy(s.storage.memories, {
        get(target, name, receiver) {
          if (name === 'rankSimilar') {
            return async (...args: Parameters<typeof target.rankSimilar>) => {
              if (!scanAnswers) return new Promise<never>((_, reject) => { failScan = reject; });
              await scanAnswers().catch(() => undefined);
              return target.rankSimilar(...args);
            };
          }
          if (name === 'cosineEstimatesOf') {
            return async (...args: Parameters<typeof target.cosineEstimatesOf>) => {
              await beforeEstimates(failScan);
              estimated = true;
              return target.cosineEstimatesOf(...args);
            };
          }
          if (name === 'cosinesOf' || name === 'findByRefs') {
            return async (...args: [Scope, readonly MemoryRef[], { vector: Float32Array; modelId: string }]) => {
              (name === 'cosinesOf' ? scored : read).push(...args[1]);
              return name === 'cosinesOf' ? target.cosinesOf(...args) : target.findByRefs(args[0], args[1]);
            };
          }
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const search = createSearchService({
        memories, searchLog: s.storage.searchLog, events: s.storage.events, embedder: s.embedder, clock: s.clock,
        timeoutMs, maxEmbedChars: 8000,
      });
      return { search, scored, read, estimated: () => estimated };
    }
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

    it('scores no keyword candidate beside a scan that has failed', async () => {
      const { search, scored, estimated } = stalled(10_000, async (failScan) => {
        failScan(new Error('the scan failed'));
        await settle();
      });
      const input = { query: 'deploy friday rollback', limit: 3, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3 };
      await expect(search.hybrid({ ...ctx, scope: own }, input)).rejects.toThrow('the scan failed');
      await settle();
      // The keyword leg had answered and its estimates were taken, but nothing was read to score exactly.
      expect(estimated()).toBe(true);
      expect(scored).toEqual([]);
    });

    it('scores and reads nothing once the deadline has passed, even when the scan answers after it', async () => {
      // The estimates come back, and the scan answers, only once the caller has had its TIMEOUT (the deadline leaves
      // the keyword leg ample time).
      let answered: Promise<unknown> = Promise.resolve();
      const afterTimeout = () => answered.then(() => undefined, () => undefined);
      const { search, scored, read, estimated } = stalled(500, afterTimeout, afterTimeout);
      const input = { query: 'deploy friday rollback', limit: 3, filter: {}, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3 };
      answered = search.hybrid({ ...ctx, scope: own }, input);
      await expect(answered).rejects.toMatchObject({ code: 'TIMEOUT' });
      await settle();
      expect(estimated()).toBe(true);
      expect(scored).toEqual([]);
      expect(read).toEqual([]);
    });

    it('answers as scoring every candidate exactly does, with the store\'s estimates or wider ones, and scores fewer', async () => {
      const exact = withEstimates(null);
      const asIs = withEstimates((e) => e);
      // Wider intervals, centred elsewhere: the exact cosine still lies within each.
      const wide = withEstimates((e) => ({ cosine: e.cosine + 0.5 * e.error + 0.02, error: 2 * e.error + 0.04 }));
      // A scan that outlasts the keyword leg: the candidates that may enter the answer are scored while it runs
      // (with the store's estimates, wider ones, or none: then every keyword hit is).
      const slow = withEstimates((e) => e, true);
      const slowWide = withEstimates((e) => ({ cosine: e.cosine - 0.5 * e.error - 0.01, error: 2 * e.error + 0.03 }), true);
      const slowExact = withEstimates(null, true);
      const ownCtx = { ...ctx, scope: own };
      const base = { query: 'deploy rollback friday canary', filter: {} };
      const settings = [
        { limit: 3, rerank: true, semanticWeight: 0.7, keywordWeight: 0.3 },
        { limit: 5, rerank: false, semanticWeight: 0.5, keywordWeight: 0.5 },
        { limit: 3, rerank: true, semanticWeight: 0, keywordWeight: 1 },
        { limit: 4, rerank: false, semanticWeight: 1, keywordWeight: 0.2 },
      ];
      for (const setting of settings) {
        const input = { ...base, ...setting };
        const truth = answer(await exact.search.hybrid(ownCtx, input));
        expect(truth.hits).toHaveLength(setting.limit);
        // No floor; one inside the answer's scores; floors below the answer, where candidates that cannot enter it
        // straddle the floor (their exact side of it decides `total`).
        const last = truth.hits[setting.limit - 1]![1] as number;
        for (const threshold of [undefined, (truth.hits[1]![1] as number) - 1e-4, last - 0.03, last - 0.08, last - 0.15]) {
          const asked = { ...input, threshold };
          const want = answer(await exact.search.hybrid(ownCtx, asked));
          expect(answer(await asIs.search.hybrid(ownCtx, asked)), JSON.stringify(asked)).toEqual(want);
          expect(answer(await wide.search.hybrid(ownCtx, asked)), JSON.stringify(asked)).toEqual(want);
          expect(answer(await slow.search.hybrid(ownCtx, asked)), JSON.stringify(asked)).toEqual(want);
          expect(answer(await slowWide.search.hybrid(ownCtx, asked)), JSON.stringify(asked)).toEqual(want);
          expect(answer(await slowExact.search.hybrid(ownCtx, asked)), JSON.stringify(asked)).toEqual(want);
        }
      }
      // Without estimates every keyword-only candidate is scored exactly; with them, far fewer.
      expect(exact.scored.length).toBeGreaterThan(100);
      expect(asIs.scored.length).toBeLessThan(exact.scored.length / 2);
      expect(wide.scored.length).toBeLessThanOrEqual(exact.scored.length);
      // With the slow scan, everything scored exactly was scored while it ran (a superset of what the end needs).
      expect(slow.scoredDuringScan.length).toBeGreaterThan(0);
      expect(slow.scoredDuringScan).toEqual(slow.scored);
      expect(slow.scored.length).toBeLessThan(exact.scored.length);
      expect(slowWide.scoredDuringScan).toEqual(slowWide.scored);
      expect(slowExact.scoredDuringScan).toEqual(slowExact.scored);
      // Their memories were read while it ran too, and none of them again after it (without a slow scan, none before).
      expect(slow.readDuringScan).toEqual(slow.scoredDuringScan);
      expect(slow.readAfterScan.filter((ref) => slow.readDuringScan.includes(ref))).toEqual([]);
      expect(asIs.readDuringScan).toEqual([]);
      expect(slowExact.scored.length).toBeGreaterThan(0);
    });
  });

  describe('log and deadline', () => {
    it('records each search in the search log and as a search.performed event', async () => {
      const own = freshScope();
      await s.memories.create(own, actor(own, 'bob'), { title: 'Unique zebra note', content: 'zebra' });
      await s.search.keyword({ scope: own, userId: 'bob', surface: 'g9' }, { query: 'zebra stripes', limit: 5, filter: {}, logFilters: { tags: ['x'] } });
      // The suggestion flushes the batched log first: the search answered a moment ago is there.
      expect(await s.search.suggest(own, 'query', 'zeb', 5)).toEqual([expect.objectContaining({ text: 'zebra stripes' })]);
      const performed = (await s.eventsOf(own)).filter((e) => e.type === 'search.performed');
      expect(performed).toHaveLength(1);
      expect(performed[0]!.data).toMatchObject({ query: 'zebra stripes', kind: 'keyword', surface: 'g9', results_count: 1, user_id: 'bob', filters: { tags: ['x'] } });
    });

    it('answers TIMEOUT when the request arrived longer ago than the deadline, and logs nothing', async () => {
      const own = freshScope();
      const e = await s.search.semantic({ scope: own, userId: 'u', surface: 't', arrivedAt: performance.now() - 20_000 },
        { query: QUERY, limit: 5, threshold: 0, filter: {} }).catch((err: DomainError) => err);
      expect(e).toMatchObject({ code: 'TIMEOUT' });
      await s.search.flushLog();
      expect(await s.eventsOf(own)).toEqual([]);
      // The same search arriving now runs (and is logged): the deadline, not the search, refused it.
      await s.search.semantic({ scope: own, userId: 'u', surface: 't', arrivedAt: performance.now() }, { query: QUERY, limit: 5, threshold: 0, filter: {} });
      await s.search.flushLog();
      expect((await s.eventsOf(own)).map((ev) => ev.type)).toEqual(['search.performed']);
    });

    it('writes the searches of a batch in one go, in order, and flushes on its own shortly after', async () => {
      const own = freshScope();
      const ctx = { scope: own, userId: 'u', surface: 't' };
      await Promise.all(['alpha one', 'alpha two', 'alpha three'].map((query) =>
        s.search.keyword(ctx, { query, limit: 5, filter: {} })));
      // Nothing waited for the log: the batch is written by its timer (not by a read that flushes).
      await new Promise((resolve) => setTimeout(resolve, 100));
      const performed = (await s.eventsOf(own)).filter((e) => e.type === 'search.performed');
      expect(performed.map((e) => e.data['query'])).toEqual(['alpha one', 'alpha two', 'alpha three']);
      expect((await s.storage.searchLog.suggestQueries(own, 'alpha', 5)).map((x) => x.text).sort())
        .toEqual(['alpha one', 'alpha three', 'alpha two']);
    });
  });
});
