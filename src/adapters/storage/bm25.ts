import type { KeywordHit, Memory } from '../../core/memories/memory.types.ts';

/**
 * BM25 as SQLite's `bm25()` computes it (k1 1.2, b 0.75, idf floored at 1e-6), shared by the adapters so that both
 * stores rank keywords alike: each gives it the statistics of the caller's scope only (docs/architecture.md,
 * "Keyword search").
 */
const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;

/** Column weights: a title hit says more than one word deep in the content. */
export const BM25_COLUMN_WEIGHTS = { title: 2.0, content: 1.0, tags: 1.5 } as const;

export interface RankedKeywordHit {
  seq: number;
  score: number;
  /** The share of the query's idf mass whose phrases the memory holds (0..1), whatever their frequency. */
  coverage: number;
}

/** As bm25(): a word in half the documents or more still counts, a little. */
function inverseDocumentFrequency(documents: number, holding: number): number {
  const idf = Math.log((documents - holding + 0.5) / (holding + 0.5));
  return idf > 0 ? idf : MIN_IDF;
}

export interface Bm25Input {
  /** Per query phrase: memory seq → its column-weighted frequency, over the memories of the scope. */
  frequencies: readonly Map<number, number>[];
  /** The memories to score (those holding a phrase, after filters). */
  candidates: Iterable<number>;
  lengthOf(seq: number): number;
  /** The scope's number of memories and their average length. */
  documents: number;
  averageLength: number;
  limit: number;
}

/** Best first (ties by seq); `total` counts every candidate. */
export function rankBm25(input: Bm25Input): { hits: RankedKeywordHit[]; total: number } {
  const { frequencies, documents, averageLength } = input;
  const idf = frequencies.map((f) => inverseDocumentFrequency(documents, f.size));
  const idfMass = idf.reduce((a, b) => a + b, 0);
  const hits: RankedKeywordHit[] = [];
  for (const seq of input.candidates) {
    const norm = K1 * (1 - B + (averageLength > 0 ? (B * input.lengthOf(seq)) / averageLength : 0));
    let score = 0;
    let held = 0;
    frequencies.forEach((f, i) => {
      const tf = f.get(seq) ?? 0;
      score += idf[i]! * ((tf * (K1 + 1)) / (tf + norm));
      if (tf > 0) held += idf[i]!;
    });
    hits.push({ seq, score, coverage: idfMass > 0 ? Math.min(1, held / idfMass) : 0 });
  }
  hits.sort((a, b) => b.score - a.score || a.seq - b.seq);
  return { hits: hits.slice(0, input.limit), total: hits.length };
}

/** The ranked hits as the port's keyword hits, in rank order; a memory deleted since the ranking is left out. */
export function toKeywordHits(ranked: readonly RankedKeywordHit[], memoryOf: (seq: number) => Memory | undefined): KeywordHit[] {
  return ranked.flatMap((h) => {
    const memory = memoryOf(h.seq);
    return memory ? [{ memory, relevance: h.score, coverage: h.coverage }] : [];
  });
}
