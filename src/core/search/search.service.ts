import type { Clock } from '../clock.ts';
import { EmbeddingError, type Embedder } from '../embeddings/embedder.port.ts';
import { norm } from '../embeddings/vectors.ts';
import { DomainError } from '../errors.ts';
import type { MemoryIndex, MemoryStore } from '../memories/memory.repository.ts';
import type { CosineEstimate, Memory, MemoryFilter, MemoryRef, Suggestion } from '../memories/memory.types.ts';
import type { Scope } from '../scope.ts';
import { keywordTerms } from './query-terms.ts';
import { calibrationFor } from './score-calibration.ts';
import { HYBRID_DEFAULT_THRESHOLD, hybridRelevance } from './relevance.ts';
import { RerankError, type RerankFailure, type RerankScore, type Reranker } from './reranker.port.ts';
import type { SearchAdmission } from './search-admission.ts';
import type { SearchKind, SearchLogEntry, SearchLogRepository } from './search-log.ts';
import type { EventRepository } from '../events/event.repository.ts';
import type { WarningLog } from '../warning-log.ts';
import { createSearchRecorder } from './search-recorder.ts';
import { validAtFor, withValidity, type ValidityOption } from '../memories/validity.ts';

/** Who searches and through which surface: scope for the data, the rest for the search log. */
export interface SearchContext {
  scope: Scope;
  userId: string;
  surface: string;
  /**
   * When the caller's request arrived (`performance.now()` time): the deadline counts from there, so time spent
   * waiting (for a search slot, behind other work) counts too. Default: when the search is called.
   */
  arrivedAt?: number | undefined;
  /** A lookup Mnemo makes for itself (ingestion's candidates), not a caller's search: left out of the search log. */
  unlogged?: true | undefined;
}

export interface ScoredHit {
  memory: Memory;
  /** The score the surface shows: similarity for semantic and vector search, the fused score for hybrid. */
  score: number;
  /** The model's calibrated similarity to the query (score-calibration.ts); absent for keyword-only search. */
  similarity?: number | undefined;
  cosine?: number | undefined;
  /** Keyword relevance normalised to 0..1 within the candidate pool; 0 when no keyword matched. */
  keywordScore?: number | undefined;
  vector?: Float32Array | undefined;
}

export interface SearchOutcome {
  hits: ScoredHit[];
  /** Every memory that qualified, of which `hits` holds at most `limit` (hybrid: the pooled candidates that did). */
  total: number;
  /** Milliseconds spent embedding the query (0 for keyword and vector search). */
  embeddingMs: number;
  /** Milliseconds spent searching the indexes, after embedding. */
  searchMs: number;
  embeddingModel: string;
}

export interface HybridOutcome extends SearchOutcome {
  semanticResults: number;
  keywordResults: number;
  method: string;
  /** Whether the reranker's scores order the hits and decided which were kept (false: hybrid's own order). */
  reranked: boolean;
}

interface Common {
  limit: number;
  /** Filters; its `validAt` is set by the service from `validity` (core/memories/validity.ts). */
  filter: MemoryFilter;
  /** Which memories the search sees in time: valid now (default), as of a moment, or all (include_expired). */
  validity?: ValidityOption | undefined;
  withVectors?: boolean | undefined;
  /** Extra context recorded in the search log (e.g. the request's filters as sent). */
  logFilters?: Record<string, unknown> | undefined;
}

export interface SemanticInput extends Common { query: string; threshold: number }
export interface KeywordInput extends Common { query: string }
export interface HybridInput extends Common {
  query: string;
  semanticWeight: number;
  keywordWeight: number;
  rerank: boolean;
  /**
   * Relevance floor (relevance.ts: the calibrated similarity raised by keyword evidence, on the scale of every other
   * threshold); 0 keeps every candidate. Default {@link HYBRID_DEFAULT_THRESHOLD}, as on every surface.
   */
  threshold?: number | undefined;
}
export interface VectorInput extends Common {
  /** A caller-supplied vector at an API width (>= the model's native width). */
  vector: readonly number[];
  threshold: number;
}

/** What a suggestion completes: a past query of the scope, a tag, or a memory title. */
export type SuggestionKind = 'query' | 'tag' | 'title';

/** `combined_score_method` of hybrid search with `rerank` true and false (docs/api.md, "Scores"). */
export const HYBRID_METHOD_RERANK = 'weighted_sum(calibrated_similarity, keyword_coverage)';
export const HYBRID_METHOD_PLAIN = 'weighted_sum(calibrated_similarity, keyword_relevance/best)';
/** `combined_score_method` of a hybrid answer the reranker ordered: its scores, over the candidates `fused` ranked. */
export const rerankedMethod = (model: string, fused: string): string => `cross_encoder${model ? `(${model})` : ''} over ${fused}`;

interface Candidate {
  ref: MemoryRef;
  /** Calibrated similarity and cosine: exact, or from `estimate` for a candidate that cannot enter the answer. */
  similarity?: number;
  cosine?: number;
  /** A keyword-only candidate's cosine bounds (MemoryIndex.cosineEstimatesOf) until it is scored exactly. */
  estimate?: CosineEstimate | undefined;
  /** BM25 relevance over the best keyword hit's (0..1). */
  keyword: number;
  /** The keyword hit's coverage of the query (0..1), 0 when no keyword matched. */
  coverage: number;
}

/**
 * A candidate's fused score lies in [low, high] and its relevance in [relevanceLow, relevanceHigh] (`exact`: the
 * bounds are equal and final); null: nothing bounds it yet.
 */
type FusedBounds = { low: number; high: number; relevanceLow: number; relevanceHigh: number; exact: boolean } | null;

/**
 * Which candidates a hybrid search must score exactly: those nothing bounds, and the estimated ones that may enter
 * the top `limit` (relevant perhaps, with a fused upper bound reaching the `limit`-th best lower bound among the
 * surely relevant: below it, `limit` candidates surely kept are surely above) or whose relevance straddles the floor
 * (they may count in `total`). The others cannot change the answer.
 */
function mustScoreExactly(bounds: readonly FusedBounds[], limit: number, floor: number): boolean[] {
  const entry = limitthLargest(bounds.flatMap((b) => (b && b.relevanceLow >= floor ? [b.low] : [])), limit);
  return bounds.map((b) => !b || (!b.exact && b.relevanceHigh >= floor && (b.high >= entry || b.relevanceLow < floor)));
}

/** The `limit`-th largest value (-Infinity when there are fewer, or limit < 1): the best `limit` kept in order. */
function limitthLargest(values: readonly number[], limit: number): number {
  if (limit < 1 || values.length < limit) return -Infinity;
  const best: number[] = [];
  for (const v of values) {
    if (best.length === limit && v <= best[limit - 1]!) continue;
    let i = Math.min(best.length, limit - 1);
    while (i > 0 && best[i - 1]! < v) {
      best[i] = best[i - 1]!;
      i--;
    }
    best[i] = v;
  }
  return best[limit - 1]!;
}

/** A hybrid search whose chosen memories keep being deleted before they are read gives up re-running after this. */
const HYBRID_ATTEMPTS = 3;

export type SearchService = ReturnType<typeof createSearchService>;

/**
 * The one search core behind every surface: semantic, keyword (the store's relevance, BM25 in SQLite), hybrid and
 * caller-vector search over the same filters and scope, each under a deadline and each recorded in the search log.
 */
export function createSearchService(deps: {
  /** The rankings, and the rows and vectors of the few hits kept. */
  memories: MemoryIndex & Pick<MemoryStore, 'findByRefs' | 'vectorsOf' | 'suggestTags' | 'suggestTitles'>;
  searchLog: SearchLogRepository;
  /** Every search emits `search.performed` (written with its log entry, in batches: search-recorder.ts). */
  events: Pick<EventRepository, 'append'>;
  /** Where a failed search-log write is reported (it no longer fails the search, which has answered by then). */
  warnings?: WarningLog | undefined;
  embedder: Embedder;
  clock: Clock;
  /** A search taking longer answers TIMEOUT, counted from the request's arrival. */
  timeoutMs: number;
  maxEmbedChars: number;
  /** Bounds concurrent searches (every search waits for a slot); none: unbounded. */
  admission?: SearchAdmission | undefined;
  /** A cross-encoder reordering hybrid's best `topN` candidates (`rerankHybrid` below); none: hybrid's own order. */
  rerank?: { reranker: Reranker; topN: number } | undefined;
}) {
  const { memories, searchLog, events, embedder, clock } = deps;
  const recorder = createSearchRecorder({ searchLog, events, warnings: deps.warnings });
  /** Shown similarities and thresholds are on the model's calibrated scale; the store works in cosines. */
  const calibration = calibrationFor(embedder.modelId);

  async function embedQuery(query: string): Promise<{ vector: Float32Array; ms: number }> {
    if (query.trim().length === 0) {
      throw new DomainError('VALIDATION_FAILED', 'query must not be empty', { fields: [{ field: 'query', reason: 'empty', message: 'must not be empty' }] });
    }
    const started = performance.now();
    try {
      // Urgent: served ahead of the texts queued for writes (a bulk import's, say).
      const [vector] = await embedder.embed([query.slice(0, deps.maxEmbedChars)], { urgent: true });
      if (!vector) throw new EmbeddingError('no vector returned');
      return { vector, ms: performance.now() - started };
    } catch (err) {
      if (err instanceof EmbeddingError) throw new DomainError('EMBEDDING_FAILED', `Embedding failed: ${err.message}`);
      throw err;
    }
  }

  /**
   * Runs one search under the deadline and logs it: it waits for a slot (OVERLOADED when the line is full), and the
   * deadline — counted from the request's arrival — covers the wait as well as the search.
   */
  async function run<T extends SearchOutcome>(ctx: SearchContext, kind: SearchKind, query: string, input: Common,
    work: (expired: AbortSignal) => Promise<T>): Promise<T> {
    const started = performance.now();
    // Validity is decided here once for every kind of search and surface: the legs read input.filter.
    input.filter = withValidity(input.filter, input.validity, clock.now());
    const timedOut = () => new DomainError('TIMEOUT', `Search took longer than ${deps.timeoutMs} ms`);
    const left = (ctx.arrivedAt ?? started) + deps.timeoutMs - started;
    if (left <= 0) throw timedOut();
    const expiry = new AbortController();
    const timer = setTimeout(() => expiry.abort(timedOut()), left);
    const deadline = new Promise<never>((_, reject) => {
      expiry.signal.addEventListener('abort', () => reject(expiry.signal.reason as Error), { once: true });
    });
    deadline.catch(() => undefined); // also raced below; this only keeps an expiry while waiting from going unhandled
    try {
      const release = deps.admission ? await deps.admission.enter(expiry.signal) : () => undefined;
      // The slot is held until the work really ends, even past the deadline: that bounds what actually runs.
      // The work is told when the deadline passes (`expired`), so that it starts nothing it no longer needs.
      const outcome = await Promise.race([work(expiry.signal).finally(release), deadline]);
      // The similarity where the search has one (hybrid's fused score is not a similarity), else its score.
      const scores = outcome.hits.map((h) => h.similarity ?? h.score);
      const entry: SearchLogEntry = {
        scope: ctx.scope, userId: ctx.userId, surface: ctx.surface, kind, query,
        resultsCount: outcome.hits.length,
        executionMs: performance.now() - started,
        avgScore: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
        filters: input.logFilters ?? {},
        at: clock.now(),
      };
      if (!ctx.unlogged) recorder.record(entry);
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The store's nearest memories with a cosine of at least `minCosine`, each with its calibrated similarity. */
  async function semanticLeg(scope: Scope, vector: Float32Array, input: Common & { minCosine: number }) {
    const { hits, total } = await memories.searchSimilar(scope, {
      vector, modelId: embedder.modelId, limit: input.limit, minCosine: input.minCosine, filter: input.filter,
      withVectors: input.withVectors,
    });
    return { hits: hits.map((h) => ({ ...h, similarity: calibration.score(h.cosine) })), total };
  }

  /**
   * The memories of the first `limit` ranked candidates, read in one query (but those in `read`, read since the
   * ranking); a candidate deleted since the ranking is skipped (`gone` counts those skipped) and, with `replace`, the
   * next one read in its place.
   */
  async function readKept(scope: Scope, ranked: readonly Candidate[], limit: number, replace: boolean,
    read: ReadonlyMap<MemoryRef, Memory> | null) {
    const kept: { candidate: Candidate; memory: Memory }[] = [];
    let gone = 0;
    for (let from = 0; kept.length < limit && from < ranked.length && (replace || from === 0);) {
      const batch = ranked.slice(from, from + limit - kept.length);
      from += batch.length;
      const unread = read ? batch.filter((c) => !read.has(c.ref)) : batch;
      const rows = unread.length > 0 ? await memories.findByRefs(scope, unread.map((c) => c.ref)) : null;
      for (const candidate of batch) {
        const memory = read?.get(candidate.ref) ?? rows?.get(candidate.ref);
        if (memory) kept.push({ candidate, memory });
        else gone++;
      }
    }
    return { kept, gone };
  }

  /**
   * One ranking and read of a hybrid search (see `hybrid` below); `gone`: chosen memories deleted before the read.
   * Only on the `last` attempt is a deleted hit replaced by the next candidate, and every candidate scored exactly
   * for it (before, those that cannot enter the answer keep their cosine estimates).
   */
  async function hybridOnce(scope: Scope, vector: Float32Array, input: HybridInput, last: boolean, expired: AbortSignal) {
    const sw = input.semanticWeight;
    const kw = input.keywordWeight;
    // Every surface validates this; the smaller semantic leg and the pruning below are only right with it.
    if (!(sw >= 0 && kw >= 0)) throw new RangeError(`hybrid weights must not be negative: ${sw}, ${kw}`);
    const floor = input.threshold ?? HYBRID_DEFAULT_THRESHOLD;
    const keywordPool = Math.max(input.limit * 5, 50);
    const query = { vector, modelId: embedder.modelId };
    // The legs rank without reading any memory (refs and scores): only the `limit` rows the fusion keeps are read.
    // rankSimilar, as the port says, leaves this thread to the keyword leg below.
    const semanticLeg = memories.rankSimilar(scope, {
      ...query, limit: input.limit, minCosine: calibration.minCosine(floor), filter: input.filter,
    });
    // Settled: answered, or failed (the search has then failed, and nothing more is worth scoring).
    let semanticSettled = false;
    semanticLeg.then(() => { semanticSettled = true; }, () => { semanticSettled = true; });
    /** Whether scoring keyword candidates beside the scan may still serve the answer. */
    const scanStillRuns = () => !semanticSettled && !expired.aborted;
    // An embedded store ranks keywords on the event loop: let the semantic leg hand its scan to the worker threads
    // (a few promise steps in) first, so that the two legs overlap.
    const terms = keywordTerms(input.query);
    const keywordLeg = (async () => {
      // A query of nothing but stop words and one-letter words has no keyword evidence (query-terms.ts).
      if (terms.length === 0) return { hits: [], total: 0 };
      await new Promise((resolve) => setImmediate(resolve));
      return memories.rankKeyword(scope, { terms, limit: keywordPool, filter: input.filter });
    })();
    const weightSum = sw + kw > 0 ? sw + kw : 1;
    const fusedOf = (similarity: number, keywordPart: number) => (sw * similarity + kw * keywordPart) / weightSum;
    // rerank true: both scores are absolute (calibrated similarity, keyword coverage), so a weak keyword match
    // counts for little; rerank false: the keyword relevance is normalised by the pool's best hit.
    const relative = (relevance: number, topRelevance: number) => (topRelevance > 0 ? relevance / topRelevance : 0);
    const keywordPartOf = (h: { relevance: number; coverage: number }, topRelevance: number) =>
      (input.rerank ? h.coverage : relative(h.relevance, topRelevance));
    // Both the fused score and the relevance grow with the similarity: the cosine's bounds bound them.
    const boundsOf = (keywordPart: number, coverage: number, e: CosineEstimate): FusedBounds => {
      const low = calibration.score(e.cosine - e.error);
      const high = calibration.score(e.cosine + e.error);
      return {
        low: fusedOf(low, keywordPart), high: fusedOf(high, keywordPart),
        relevanceLow: hybridRelevance(low, coverage), relevanceHigh: hybridRelevance(high, coverage), exact: e.error === 0,
      };
    };
    /**
     * Estimates of the refs' cosines, narrow only where that can matter: a store with wide bounds to give first
     * narrows those that leave a ref able to enter the top `limit` (beside `known`, the candidates scored already) or
     * straddling the floor.
     */
    const estimatesFor = (items: readonly { ref: MemoryRef; keywordPart: number; coverage: number }[], known: FusedBounds[]) =>
      memories.cosineEstimatesOf(scope, items.map((c) => c.ref), query, (wide) => {
        const must = mustScoreExactly([...known, ...items.map((c) => {
          const e = wide.get(c.ref);
          return e ? boundsOf(c.keywordPart, c.coverage, e) : null;
        })], input.limit, floor).slice(known.length);
        return items.filter((c, i) => must[i] && wide.has(c.ref)).map((c) => c.ref);
      });

    // Keyword-only candidates need their cosine. While the semantic leg still runs (which hits are keyword-only is
    // known only when it answers), every keyword hit is estimated at once, beside it; and if it runs still (a big
    // workspace's scan, on a loop that would wait otherwise) those that may enter the answer whatever the semantic
    // leg brings are scored exactly too: its hits can only raise the entry bar, so these include every one the
    // final step below would score. Once it has answered, only the missing ones are estimated and scored (below).
    const early = keywordLeg.then(async (k) => {
      if (last || !scanStillRuns() || k.hits.length === 0) return null;
      const top = k.hits[0]!.relevance;
      const hits = k.hits.map((h) => ({ ref: h.ref, keywordPart: keywordPartOf(h, top), coverage: h.coverage }));
      const estimates = await estimatesFor(hits, []);
      if (!scanStillRuns()) return { estimates, rows: null, exact: null };
      const must = mustScoreExactly(hits.map((h) => {
        const e = estimates.get(h.ref);
        return e ? boundsOf(h.keywordPart, h.coverage, e) : null;
      }), input.limit, floor);
      const refs = hits.filter((_, i) => must[i]).map((h) => h.ref);
      const cosines = refs.length > 0 ? await memories.cosinesOf(scope, refs, query) : new Map<MemoryRef, number>();
      // Their memories too, while the loop would wait for the scan anyway: they are most of the answer (all of it for
      // each of the bench's questions at 10k), and what the fusion keeps of them is not read again after the scan.
      const rows = refs.length > 0 && scanStillRuns() ? await memories.findByRefs(scope, refs) : null;
      // Scored: the exact cosine, as an estimate without error (-1 without a stored vector, as below).
      return { estimates, rows, exact: new Map(refs.map((ref) => [ref, { cosine: cosines.get(ref) ?? -1, error: 0 }])) };
    });
    // All three in Promise.all from the start, so a leg that fails meanwhile is never an unhandled rejection.
    const [semantic, keyword, earlyScores] = await Promise.all([semanticLeg, keywordLeg, early]);
    // The caller has had its TIMEOUT: nothing more is read for it.
    if (expired.aborted) throw expired.reason;
    const candidates = new Map<MemoryRef, Candidate>();
    semantic.hits.forEach((h) => candidates.set(h.ref, { ref: h.ref, similarity: calibration.score(h.cosine), cosine: h.cosine, keyword: 0, coverage: 0 }));
    const topRelevance = keyword.hits[0]?.relevance ?? 0;
    keyword.hits.forEach((h) => {
      const c = candidates.get(h.ref) ?? { ref: h.ref, keyword: 0, coverage: 0 };
      c.keyword = relative(h.relevance, topRelevance);
      c.coverage = h.coverage;
      candidates.set(h.ref, c);
    });
    const keywordPart = (c: Candidate) => (input.rerank ? c.coverage : c.keyword);
    const fused = (c: Candidate) => fusedOf(c.similarity ?? 0, keywordPart(c));
    const relevance = (c: Candidate) => hybridRelevance(c.similarity ?? 0, c.coverage);
    const exactBounds = (c: Candidate): FusedBounds => {
      const f = fused(c);
      const r = relevance(c);
      return { low: f, high: f, relevanceLow: r, relevanceHigh: r, exact: true };
    };

    // Keyword-only candidates: the store's estimates bound their fused scores; only those that may enter the top
    // `limit` or straddle the floor are scored exactly (as the semantic search would score them), so a kept hit's
    // scores are always exact and an estimate never decides an order or a count it could get wrong.
    const all = [...candidates.values()];
    const keywordOnly = all.filter((c) => c.similarity === undefined);
    const estimates = last || keywordOnly.length === 0 ? null
      : earlyScores?.estimates ?? await estimatesFor(keywordOnly.map((c) => ({ ref: c.ref, keywordPart: keywordPart(c), coverage: c.coverage })),
        all.filter((c) => c.similarity !== undefined).map(exactBounds));
    const must = mustScoreExactly(all.map((c) => {
      if (c.similarity !== undefined) return exactBounds(c);
      c.estimate = earlyScores?.exact?.get(c.ref) ?? estimates?.get(c.ref);
      return c.estimate ? boundsOf(keywordPart(c), c.coverage, c.estimate) : null;
    }), input.limit, floor);
    const toScore = new Set(all.filter((_, i) => must[i]));
    const cosines = toScore.size > 0 ? await memories.cosinesOf(scope, [...toScore].map((c) => c.ref), query) : null;
    for (const c of keywordOnly) {
      // Scored: the exact cosine (-1 without a stored vector, as before any estimate); else the estimate stands
      // (exact when scored early).
      c.cosine = toScore.has(c) ? cosines?.get(c.ref) ?? -1 : c.estimate!.cosine;
      c.similarity = calibration.score(c.cosine);
    }

    // Each fused score computed once, not twice per comparison of the sort. The fused score orders; the relevance
    // (relevance.ts) decides what is kept: an estimate left here is surely on one side of the floor.
    const scored = [...candidates.values()].filter((c) => relevance(c) >= floor)
      .map((c) => ({ c, fused: fused(c), similarity: c.similarity ?? 0 }));
    scored.sort((a, b) => b.fused - a.fused || b.similarity - a.similarity);
    const ranked = scored.map((s) => s.c);
    const { kept, gone } = await readKept(scope, ranked, input.limit, last, earlyScores?.rows ?? null);
    const vectors = input.withVectors && kept.length > 0
      ? await memories.vectorsOf(scope, kept.map((k) => k.memory.id), embedder.modelId) : null;
    const outcome = {
      hits: kept.map(({ candidate: c, memory }) => ({
        memory, score: fused(c), similarity: c.similarity, cosine: c.cosine, keywordScore: c.keyword,
        vector: vectors?.get(memory.id),
      })),
      total: ranked.length - gone,
      semanticResults: semantic.total,
      keywordResults: keyword.total,
      method: input.rerank ? HYBRID_METHOD_RERANK : HYBRID_METHOD_PLAIN,
    };
    return { outcome, gone };
  }

  /** Failure kinds warned about since the reranker last answered: one warning per kind and outage, not per search. */
  const rerankWarned = new Set<RerankFailure>();
  /** What the reranker reads of a memory: its title and content, cut as the embedding model's input is. */
  const documentOf = (m: Memory): string => (m.title ? `${m.title}\n${m.content}` : m.content).slice(0, deps.maxEmbedChars);

  /**
   * Hybrid's ranked candidates (all at or above its floor, best first) reordered by the reranker: each hit's score
   * becomes the reranker's, the floor applies to that score, and `total` counts the candidates it kept. On a failure
   * (timeout, error, bad answer), hybrid's own answer.
   */
  async function rerankHybrid(input: HybridInput, ranked: Awaited<ReturnType<typeof hybridOnce>>['outcome'],
    expired: AbortSignal): Promise<Omit<HybridOutcome, 'embeddingMs' | 'searchMs' | 'embeddingModel'>> {
    const own = { ...ranked, hits: ranked.hits.slice(0, input.limit), reranked: false };
    // Nothing reached the floor: nothing to ask the reranker about.
    if (ranked.hits.length === 0 || !deps.rerank) return own;
    const { reranker } = deps.rerank;
    let scores: RerankScore[];
    try {
      scores = await reranker.rerank(input.query, ranked.hits.map((h) => documentOf(h.memory)), expired);
    } catch (err) {
      // The caller has had its TIMEOUT already.
      if (expired.aborted) throw expired.reason;
      const kind: RerankFailure = err instanceof RerankError ? err.kind : 'bad_answer';
      if (!rerankWarned.has(kind)) {
        rerankWarned.add(kind);
        deps.warnings?.warn({ rerankFailure: kind }, `reranker failed, hybrid search answers in its own order until it recovers: ${(err as Error).message}`);
      }
      return own;
    }
    rerankWarned.clear();
    const floor = input.threshold ?? HYBRID_DEFAULT_THRESHOLD;
    // A stable sort: candidates the reranker scores alike keep hybrid's order.
    const kept = scores.filter((s) => s.score >= floor).sort((a, b) => b.score - a.score);
    return {
      ...ranked,
      hits: kept.slice(0, input.limit).map((s) => ({ ...ranked.hits[s.index]!, score: s.score })),
      total: kept.length,
      method: rerankedMethod(reranker.model, ranked.method),
      reranked: true,
    };
  }

  return {
    embedQuery,

    /** Writes the searches recorded so far to the search log and the outbox (before reading the log, at shutdown). */
    flushLog: (): Promise<void> => recorder.flush(),

    /** Completions of `text` drawn from the scope's own data (not a search: nothing is logged). */
    async suggest(scope: Scope, kind: SuggestionKind, text: string, limit: number, validity?: ValidityOption): Promise<Suggestion[]> {
      const validAt = validAtFor(validity, clock.now());
      switch (kind) {
        case 'tag': return memories.suggestTags(scope, text, limit, validAt);
        case 'title': return memories.suggestTitles(scope, text, limit, validAt);
        case 'query':
          // Past queries include the searches of this scope answered a moment ago.
          await recorder.flushFor(scope);
          return searchLog.suggestQueries(scope, text, limit);
      }
    },

    semantic: (ctx: SearchContext, input: SemanticInput) => run(ctx, 'semantic', input.query, input, async () => {
      const { vector, ms } = await embedQuery(input.query);
      const started = performance.now();
      const { hits, total } = await semanticLeg(ctx.scope, vector, { ...input, minCosine: calibration.minCosine(input.threshold) });
      return {
        hits: hits.map((h) => ({ memory: h.memory, score: h.similarity, similarity: h.similarity, cosine: h.cosine, vector: h.vector })),
        total, embeddingMs: ms, searchMs: performance.now() - started, embeddingModel: embedder.modelId,
      };
    }),

    keyword: (ctx: SearchContext, input: KeywordInput) => run(ctx, 'keyword', input.query, input, async () => {
      const started = performance.now();
      const terms = keywordTerms(input.query);
      // Nothing but stop words and one-letter words: nothing to match (query-terms.ts).
      const { hits, total } = terms.length === 0 ? { hits: [], total: 0 }
        : await memories.searchKeyword(ctx.scope, { terms, limit: input.limit, filter: input.filter });
      const top = hits[0]?.relevance ?? 0;
      return {
        hits: hits.map((h) => ({ memory: h.memory, score: top > 0 ? h.relevance / top : 0, keywordScore: top > 0 ? h.relevance / top : 0 })),
        total, embeddingMs: 0, searchMs: performance.now() - started, embeddingModel: embedder.modelId,
      };
    }),

    /**
     * Hybrid: the semantic and keyword legs each yield their own candidates (so keyword-only hits survive), every
     * candidate gets its exact similarity and its keyword score, then they are ordered by the weighted sum
     * `semanticWeight * similarity + keywordWeight * keyword part` (rerank true: the keyword coverage; false: BM25
     * relative to the best hit). Only candidates whose relevance reaches the floor are kept (relevance.ts: the
     * similarity raised by the keyword coverage; default HYBRID_DEFAULT_THRESHOLD).
     *
     * The semantic leg ranks only the best `limit` memories at or above the floor: any other memory the keyword leg
     * did not bring scores `semanticWeight * similarity / (sum of weights)` (weights are never negative), no more than
     * each of those `limit`, and its relevance is its similarity, no more than theirs either, so it can never enter
     * the answer (docs/architecture.md, "Hybrid search"). A memory read
     * as deleted between the ranking and the read would be replaced by a candidate that may not be the next best, so
     * the search runs again (a delete has left the indexes by the time it answers).
     */
    hybrid: (ctx: SearchContext, input: HybridInput) => run(ctx, 'hybrid', input.query, input, async (expired): Promise<HybridOutcome> => {
      const { vector, ms } = await embedQuery(input.query);
      const started = performance.now();
      // With a reranker, hybrid ranks its best `topN` (at least a page) for the reranker to reorder.
      const ranking = deps.rerank ? { ...input, limit: Math.max(input.limit, deps.rerank.topN) } : input;
      for (let attempt = 1; ; attempt++) {
        const { outcome, gone } = await hybridOnce(ctx.scope, vector, ranking, attempt === HYBRID_ATTEMPTS, expired);
        // Past the deadline the caller has its TIMEOUT: no attempt more.
        if (gone === 0 || attempt === HYBRID_ATTEMPTS || expired.aborted) {
          const answer = deps.rerank ? await rerankHybrid(input, outcome, expired) : { ...outcome, reranked: false };
          return { ...answer, embeddingMs: ms, searchMs: performance.now() - started, embeddingModel: embedder.modelId };
        }
      }
    }),

    /**
     * Search by a caller-supplied vector given at an API width. Stored vectors are zero-padded to that width at the
     * edge, so the cosine in the wide space is the native cosine times |native part| / |whole vector|.
     */
    byVector: (ctx: SearchContext, input: VectorInput) => run(ctx, 'vector', '', input, async () => {
      const started = performance.now();
      const native = Float32Array.from(input.vector.slice(0, embedder.dimensions));
      const whole = norm(input.vector);
      const ratio = whole > 0 ? norm(native) / whole : 0;
      if (ratio === 0) return { hits: [], total: 0, embeddingMs: 0, searchMs: performance.now() - started, embeddingModel: embedder.modelId };
      // Every cosine is at least -1: a lower bound asks for everything, as -1 does.
      const minCosine = Math.max(-1, calibration.minCosine(input.threshold) / ratio);
      if (minCosine > 1) return { hits: [], total: 0, embeddingMs: 0, searchMs: performance.now() - started, embeddingModel: embedder.modelId };
      const { hits, total } = await semanticLeg(ctx.scope, native, { ...input, minCosine });
      return {
        hits: hits.map((h) => {
          const c = h.cosine * ratio;
          return { memory: h.memory, score: calibration.score(c), similarity: calibration.score(c), cosine: c, vector: h.vector };
        }),
        total, embeddingMs: 0, searchMs: performance.now() - started, embeddingModel: embedder.modelId,
      };
    }),
  };
}
