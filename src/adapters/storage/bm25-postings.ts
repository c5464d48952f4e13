import { inverseDocumentFrequency, lengthNorm, termScore, TopHits, type RankedKeywordHit } from './bm25.ts';

/**
 * One phrase's postings: the memories holding it in [start, end), each seq once, with its column-weighted frequency
 * and the memory's length in tokens.
 */
export interface PostingRun {
  readonly seqs: ArrayLike<number>;
  readonly frequencies: ArrayLike<number>;
  readonly lengths: ArrayLike<number>;
  readonly start: number;
  readonly end: number;
}

export interface PostingsInput {
  /** Per query phrase, the memories of the scope holding it (after any cap). */
  runs: readonly PostingRun[];
  /** Per phrase, how many memories of the scope hold it (its idf): at least its run's length. */
  holding: readonly number[];
  /** A lower bound of the matches known otherwise (a capped phrase's document count). */
  totalAtLeast?: number | undefined;
  documents: number;
  averageLength: number;
  limit: number;
}

/**
 * BM25's best `limit` memories and how many memories match (at least `totalAtLeast`), as rankBm25 ranks them, read
 * phrase by phrase rather than memory by memory: each posting adds its phrase's part to its memory's score in a table
 * of the memories seen (open addressing on the seq), then the table goes through the bounded heap once. A merge of the
 * sorted runs compared every run's head for each memory and looked each candidate's length up in a map; here a
 * posting costs a probe and its part (its length travels with it), and the match count is the table's size.
 * The same numbers: each memory's parts are added in phrase order, as rankBm25 adds them, and the best hits do not
 * depend on the order memories reach the heap (equal scores go to the lower seq).
 */
export function rankPostings(input: PostingsInput): { hits: RankedKeywordHit[]; total: number } {
  const { runs, documents, averageLength } = input;
  const idf = input.holding.map((h) => inverseDocumentFrequency(documents, h));
  const idfMass = idf.reduce((a, b) => a + b, 0);
  const postings = runs.reduce((sum, r) => sum + Math.max(0, r.end - r.start), 0);
  const { keys, rows, seqs, scores, held, shift } = scratchFor(postings);
  let count = 0;
  try {
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r]!;
      const phraseIdf = idf[r]!;
      for (let k = run.start; k < run.end; k++) {
        const seq = run.seqs[k]!;
        let slot = Math.imul(seq | 0, FIBONACCI) >>> shift;
        let row: number;
        for (;;) {
          const key = keys[slot]!;
          if (key === seq) {
            row = rows[slot]!;
            break;
          }
          if (key === EMPTY) {
            keys[slot] = seq;
            row = rows[slot] = count++;
            seqs[row] = seq;
            scores[row] = 0;
            held[row] = 0;
            break;
          }
          slot = (slot + 1) & (keys.length - 1);
        }
        // A frequency of 0 still makes a match (rankBm25 counts every candidate), worth nothing.
        const tf = run.frequencies[k]!;
        if (tf > 0) {
          scores[row]! += termScore(phraseIdf, tf, lengthNorm(run.lengths[k]!, averageLength));
          held[row]! += phraseIdf;
        }
      }
    }
  } finally {
    keys.fill(EMPTY);
  }
  const best = new TopHits(input.limit);
  for (let row = 0; row < count; row++) {
    const seq = seqs[row]!;
    const score = scores[row]!;
    if (best.accepts(score, seq)) best.add({ seq, score, coverage: idfMass > 0 ? Math.min(1, held[row]! / idfMass) : 0 });
  }
  return { hits: best.sorted(), total: Math.max(count, input.totalAtLeast ?? 0) };
}

/** No memory's seq (a row id, never negative). */
const EMPTY = -1;

/** A seq's first slot: the top bits of its low 32 bits times 2^32 / φ (Fibonacci hashing spreads consecutive seqs). */
const FIBONACCI = 0x9e3779b1;

/**
 * The table and rows of one ranking, kept between rankings (grown, never shrunk) so that a search allocates nothing
 * per posting: one thread ranks at a time, and a ranking leaves every key EMPTY.
 */
let scratch: { keys: Float64Array; rows: Int32Array; seqs: Float64Array; scores: Float64Array; held: Float64Array } | null = null;

function scratchFor(postings: number) {
  // At most half full, whatever the runs share.
  let bits = 4;
  while (1 << bits < postings * 2) bits++;
  const slots = 1 << bits;
  if (!scratch || scratch.keys.length < slots) {
    scratch = {
      keys: new Float64Array(slots).fill(EMPTY), rows: new Int32Array(slots),
      seqs: new Float64Array(postings), scores: new Float64Array(postings), held: new Float64Array(postings),
    };
  }
  if (scratch.seqs.length < postings) {
    scratch.seqs = new Float64Array(postings);
    scratch.scores = new Float64Array(postings);
    scratch.held = new Float64Array(postings);
  }
  // The table in use is exactly `slots` long: the probe's start and step depend on it.
  return { ...scratch, keys: scratch.keys.subarray(0, slots), rows: scratch.rows.subarray(0, slots), shift: 32 - bits };
}
