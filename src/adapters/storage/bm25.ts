import type { KeywordCandidate } from '../../core/memories/memory.types.ts';

/**
 * BM25 as SQLite's `bm25()` computes it (k1 1.2, b 0.75, idf floored at 1e-6), shared by the adapters so that both
 * stores rank keywords alike: each gives it the statistics of the caller's scope only (docs/architecture.md,
 * "Keyword search").
 */
const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;
/** BM25's length normalisation of an empty memory: the least any memory's can be (lengths are never negative). */
const SHORTEST_NORM = K1 * (1 - B);

/** A memory's length normalisation: the longer than average, the less each occurrence counts. */
export function lengthNorm(length: number, averageLength: number): number {
  return K1 * (1 - B + (averageLength > 0 ? (B * length) / averageLength : 0));
}

/**
 * One phrase's part of a memory's score. It only grows when `tf` grows or `norm` falls, in floating point too, so the
 * part at the shortest norm bounds the part at any length.
 */
export function termScore(idf: number, tf: number, norm: number): number {
  return idf * ((tf * (K1 + 1)) / (tf + norm));
}

/** Column weights: a title hit says more than one word deep in the content. */
export const BM25_COLUMN_WEIGHTS = { title: 2.0, content: 1.0, tags: 1.5 } as const;

export interface RankedKeywordHit {
  seq: number;
  score: number;
  /** The share of the query's idf mass whose phrases the memory holds (0..1), whatever their frequency. */
  coverage: number;
}

/** As bm25(): a word in half the documents or more still counts, a little. */
export function inverseDocumentFrequency(documents: number, holding: number): number {
  const idf = Math.log((documents - holding + 0.5) / (holding + 0.5));
  return idf > 0 ? idf : MIN_IDF;
}

/** A phrase's column-weighted frequency per memory seq (a Map, or a cursor that expects ascending seqs). */
export interface FrequencyLookup {
  get(seq: number): number | undefined;
  /** How many memories it holds. */
  readonly size: number;
}

export interface Bm25Input {
  /** Per query phrase: memory seq → its column-weighted frequency, over the memories of the scope. */
  frequencies: readonly FrequencyLookup[];
  /**
   * Per phrase, how many memories of the scope hold it, when `frequencies` holds only some of them (a candidate
   * cap); default: each map's size.
   */
  holding?: readonly number[] | undefined;
  /** A lower bound of the matches known otherwise (a capped phrase's document count, when nothing filters). */
  totalAtLeast?: number | undefined;
  /**
   * The memories to score (those holding a phrase, after filters), each once; each is looked up in every phrase's
   * frequencies in this order (ascending seqs when a lookup is a cursor).
   */
  candidates: Iterable<number>;
  lengthOf(seq: number): number;
  /** The scope's number of memories and their average length. */
  documents: number;
  averageLength: number;
  limit: number;
}

/** A memory's score and coverage from its frequency of each phrase (0: not held) at its length's `norm`. */
function scoreHit(seq: number, tfs: Float64Array, idf: readonly number[], idfMass: number, norm: number): RankedKeywordHit {
  let score = 0;
  let held = 0;
  for (let i = 0; i < tfs.length; i++) {
    const tf = tfs[i]!;
    if (tf <= 0) continue;
    score += termScore(idf[i]!, tf, norm);
    held += idf[i]!;
  }
  return { seq, score, coverage: idfMass > 0 ? Math.min(1, held / idfMass) : 0 };
}

/**
 * Best first (ties by seq); `total` counts every candidate (at least `totalAtLeast`). Only the best `limit` are kept while scoring (a bounded
 * heap), so a query matching most of the scope costs one pass, not a sort of every match.
 */
export function rankBm25(input: Bm25Input): { hits: RankedKeywordHit[]; total: number } {
  const { frequencies, documents, averageLength, limit } = input;
  const holding = input.holding ?? frequencies.map((f) => f.size);
  const idf = holding.map((n) => inverseDocumentFrequency(documents, n));
  const idfMass = idf.reduce((a, b) => a + b, 0);
  const best = new TopHits(limit);
  const tfs = new Float64Array(frequencies.length);
  let total = 0;
  for (const seq of input.candidates) {
    total++;
    // The memory's frequencies first (every candidate, in order), then its best possible score, that of the shortest
    // length: once the heap is full most candidates cannot enter it, and their length lookup (a map read per
    // candidate, most of the ranking's time) is skipped; a candidate skipped here would have been refused.
    let ceiling = 0;
    for (let i = 0; i < frequencies.length; i++) {
      const tf = frequencies[i]!.get(seq);
      tfs[i] = tf !== undefined && tf > 0 ? tf : 0;
      if (tfs[i]! > 0) ceiling += termScore(idf[i]!, tfs[i]!, SHORTEST_NORM);
    }
    if (!best.accepts(ceiling, seq)) continue;
    const hit = scoreHit(seq, tfs, idf, idfMass, lengthNorm(input.lengthOf(seq), averageLength));
    if (best.accepts(hit.score, seq)) best.add(hit);
  }
  return { hits: best.sorted(), total: Math.max(total, input.totalAtLeast ?? 0) };
}

/**
 * The candidate cap applied to one phrase's complete frequencies (a store that read every occurrence): only the `cap`
 * memories with the highest seq (the newest) are kept; `holding` keeps the exact count.
 */
export function capFrequencies(frequencies: ReadonlyMap<number, number>, cap: number):
  { frequencies: Map<number, number>; holding: number } {
  const holding = frequencies.size;
  if (holding <= cap) return { frequencies: new Map(frequencies), holding };
  const newest = [...frequencies.keys()].sort((a, b) => b - a).slice(0, cap);
  return { frequencies: new Map(newest.map((seq) => [seq, frequencies.get(seq)!])), holding };
}

/** Before: higher score, then lower seq. */
const before = (a: RankedKeywordHit, b: RankedKeywordHit): boolean => a.score > b.score || (a.score === b.score && a.seq < b.seq);

/** The best `limit` hits seen, in a binary heap whose root is the worst of them. */
export class TopHits {
  private readonly heap: RankedKeywordHit[] = [];
  constructor(private readonly limit: number) {}

  accepts(score: number, seq: number): boolean {
    if (this.limit <= 0) return false;
    if (this.heap.length < this.limit) return true;
    const worst = this.heap[0]!;
    return score > worst.score || (score === worst.score && seq < worst.seq);
  }

  add(hit: RankedKeywordHit): void {
    const h = this.heap;
    if (h.length < this.limit) {
      h.push(hit);
      let i = h.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!before(h[parent]!, h[i]!)) break; // the parent must be the worse one
        [h[parent], h[i]] = [h[i]!, h[parent]!];
        i = parent;
      }
      return;
    }
    h[0] = hit;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < h.length && before(h[worst]!, h[l]!)) worst = l;
      if (r < h.length && before(h[worst]!, h[r]!)) worst = r;
      if (worst === i) break;
      [h[worst], h[i]] = [h[i]!, h[worst]!];
      i = worst;
    }
  }

  sorted(): RankedKeywordHit[] {
    return [...this.heap].sort((a, b) => b.score - a.score || a.seq - b.seq);
  }
}

/**
 * The ranked hits with what `of` finds for each (its memory), in rank order, as the port's keyword
 * hits; a memory deleted since the ranking (`of` finds nothing) is left out.
 */
export function toKeywordHits<T extends object>(ranked: readonly RankedKeywordHit[], of: (seq: number) => T | undefined):
  (T & { relevance: number; coverage: number })[] {
  return ranked.flatMap((h) => {
    const found = of(h.seq);
    return found ? [{ ...found, relevance: h.score, coverage: h.coverage }] : [];
  });
}

/** The ranked hits as the port's keyword candidates, by ref (both stores' refs are seqs): built field by field. */
export function toKeywordCandidates(ranked: readonly RankedKeywordHit[]): KeywordCandidate[] {
  return ranked.map((h) => ({ ref: h.seq, relevance: h.score, coverage: h.coverage }));
}
