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
 * of the memories seen (indexed by seq when the seqs lie close together, else open addressing on the seq: isDense),
 * then the rows go through the bounded heap once. A merge of the
 * sorted runs compared every run's head for each memory and looked each candidate's length up in a map; here a
 * posting costs a probe and its part (its length travels with it), and the match count is the table's size.
 * The same numbers: each memory's parts are added in phrase order, as rankBm25 adds them, and the best hits do not
 * depend on the order memories reach the heap (equal scores go to the lower seq).
 */
export function rankPostings(input: PostingsInput): { hits: RankedKeywordHit[]; total: number } {
  const { runs, documents, averageLength } = input;
  const idf = input.holding.map((h) => inverseDocumentFrequency(documents, h));
  const idfMass = idf.reduce((a, b) => a + b, 0);
  let postings = 0;
  let least = Infinity;
  let most = -Infinity;
  for (const run of runs) {
    if (run.end <= run.start) continue;
    postings += run.end - run.start;
    // Each run is ascending: its ends bound it.
    least = Math.min(least, run.seqs[run.start]!);
    most = Math.max(most, run.seqs[run.end - 1]!);
  }
  const { seqs, scores, held } = rowsFor(postings);
  // Dense: row + 1 at seq − least (0: not seen yet). Else open addressing on the seq.
  const at = postings > 0 && isDense(most - least + 1, postings) ? denseTable(most - least + 1) : null;
  const { keys, rows, shift } = at ? NO_HASH : hashTable(postings);
  const mask = keys.length - 1;
  let count = 0;
  try {
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r]!;
      const phraseIdf = idf[r]!;
      for (let k = run.start; k < run.end; k++) {
        const seq = run.seqs[k]!;
        let row: number;
        let fresh = false;
        if (at) {
          row = at[seq - least]! - 1;
          if (row < 0) {
            row = count++;
            at[seq - least] = row + 1;
            fresh = true;
          }
        } else {
          let slot = Math.imul(seq | 0, FIBONACCI) >>> shift;
          for (;;) {
            const key = keys[slot]!;
            if (key === seq) {
              row = rows[slot]!;
              break;
            }
            if (key === EMPTY) {
              keys[slot] = seq;
              row = rows[slot] = count++;
              fresh = true;
              break;
            }
            slot = (slot + 1) & mask;
          }
        }
        if (fresh) {
          seqs[row] = seq;
          scores[row] = 0;
          held[row] = 0;
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
    if (at) for (let row = 0; row < count; row++) at[seqs[row]! - least] = 0;
    else keys.fill(EMPTY);
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
 * A scope's seqs mostly lie close together (the row ids of one workspace's memories), so a table indexed by seq − least
 * is usually small: a load per posting instead of a hash probe, in a table a few times smaller than the hash's (4 bytes
 * a seq of the span, against 12 a slot at twice the postings), which counted under a search's load (the scan threads
 * share the caches). Used while the span is within DENSE_SPAN_ALWAYS or this many times the postings, never beyond
 * DENSE_SPAN_MAX: a scope whose seqs lie far apart (many tenants' memories between them) takes the hash table.
 */
const DENSE_SPAN_PER_POSTING = 16;
const DENSE_SPAN_ALWAYS = 1 << 16;
const DENSE_SPAN_MAX = 1 << 22;

export function isDense(span: number, postings: number): boolean {
  return span <= DENSE_SPAN_MAX && (span <= DENSE_SPAN_ALWAYS || span <= postings * DENSE_SPAN_PER_POSTING);
}

/**
 * The tables and rows of one ranking, kept between rankings (grown, never shrunk) so that a search allocates nothing
 * per posting: one thread ranks at a time, and a ranking leaves both tables empty.
 */
let denseRows = new Int32Array(0);
let hashKeys = new Float64Array(0);
let hashRows = new Int32Array(0);
let scratchRows = { seqs: new Float64Array(0), scores: new Float64Array(0), held: new Float64Array(0) };

/** All 0, at least `span` long. */
function denseTable(span: number): Int32Array {
  if (denseRows.length < span) denseRows = new Int32Array(span);
  return denseRows;
}

/** All EMPTY, exactly the slots for `postings` at most half full: the probe's start and step depend on the length. */
function hashTable(postings: number): { keys: Float64Array; rows: Int32Array; shift: number } {
  let bits = 4;
  while (1 << bits < postings * 2) bits++;
  const slots = 1 << bits;
  if (hashKeys.length < slots) {
    hashKeys = new Float64Array(slots).fill(EMPTY);
    hashRows = new Int32Array(slots);
  }
  return { keys: hashKeys.subarray(0, slots), rows: hashRows.subarray(0, slots), shift: 32 - bits };
}

const NO_HASH = { keys: new Float64Array(1), rows: new Int32Array(1), shift: 0 };

function rowsFor(postings: number) {
  if (scratchRows.seqs.length < postings) {
    scratchRows = { seqs: new Float64Array(postings), scores: new Float64Array(postings), held: new Float64Array(postings) };
  }
  return scratchRows;
}
