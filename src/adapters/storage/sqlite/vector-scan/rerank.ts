import { exactScore } from './exact-score.ts';
import { unitRowInto } from './matrix-storage.ts';
import { insertTop, type PartResult } from './scan-part.ts';

/**
 * The second half of a search: the exact scores of the few rows the int8 pre-scan could not decide, from the rows'
 * float vectors read where they are stored (a VectorSource), not from memory: the matrix keeps only the codes.
 *
 * A part of a pre-scan (scan-part.ts) reports the rows it counted for certain, the rows whose interval straddles the
 * threshold, and the top-k candidates with their intervals. Merged here: the k-th best lower bound over all parts is
 * the floor an exact top-k member must reach, so only candidates whose upper bound reaches it are read (about k plus
 * the near-ties), and every threshold-ambiguous row once.
 *
 * When the vectors' store can be opened from another thread (a SQLite file: `VectorSource.store`), each scan thread
 * re-ranks its own part right after pre-scanning it, reading on its own connection, and returns the part's exact top-k
 * and count (a RankedPart): the calling thread only merges (finishParts). A part's floor is its own k-th best lower
 * bound, lower than the merged one, so a split search reads a few more rows in all, none of them on the event loop.
 */

/** Where a matrix's rows' float vectors are read, by key, as stored (not normalised). */
export interface VectorSource {
  /** The stored vector of `key`, or undefined when it is gone (deleted, re-embedded with another width). */
  read(key: number): ArrayLike<number> | undefined;
  /** The same vectors as a scan thread can read them itself, when it can (a store file, not an in-memory store). */
  readonly store?: StoreRef;
}

/** A store file's vectors of one model and width (what a scan thread opens: sqlite-stored-vectors.ts). */
export interface StoreRef {
  file: string;
  modelId: string;
  dims: number;
}

/**
 * The exact cosine of each key's row with the unit `query`, undefined for a key whose vector is gone: the row
 * normalised as the codes were made from it (unitRowInto) and scored by exactScore, so every path agrees to the bit.
 * The one function for "the exact score of row r for query q".
 */
export function exactScores(source: VectorSource, query: Float32Array, keys: readonly number[]): (number | undefined)[] {
  return keys.map(exactScorer(source, query));
}

/** exactScores one key at a time (one scratch row for all). */
function exactScorer(source: VectorSource, query: Float32Array): (key: number) => number | undefined {
  const dims = query.length;
  const unit = new Float32Array(dims);
  return (key) => {
    const vector = source.read(key);
    if (!vector || vector.length < dims) return undefined;
    unitRowInto(vector, dims, unit);
    return exactScore(unit, 0, query, dims);
  };
}

/** What one part of a pre-scan could not decide: keys with their intervals [lower, upper] around the exact score. */
export interface Undecided {
  keys: number[];
  lowers: number[];
  uppers: number[];
}

/** One part's pre-scan: rows counted for certain, threshold-ambiguous rows, and top-k candidates. */
export interface Prescan {
  /** Rows whose lower bound reaches the threshold. */
  certain: number;
  ambiguous: Undecided;
  candidates: Undecided;
}

/**
 * Scores merged: the exact top-k and total. `stale` when a row read does not match the codes it was pre-scanned with
 * (its vector changed or went since: a write racing the search), so the caller searches again.
 */
export function rerank(parts: readonly Prescan[], k: number, minCosine: number, query: Float32Array, source: VectorSource):
  RankedPart {
  let total = 0;
  const lowers: number[] = [];
  for (const part of parts) {
    total += part.certain;
    for (const lower of part.candidates.lowers) lowers.push(lower);
  }
  const floor = k > 0 && lowers.length >= k ? kthLargest(lowers, k) : -Infinity;

  // Keys to read, once each, with their interval (the same row has the same interval in both lists).
  const bounds = new Map<number, [number, number]>();
  const ambiguous: number[] = [];
  const candidates: number[] = [];
  for (const part of parts) {
    const a = part.ambiguous;
    for (let i = 0; i < a.keys.length; i++) {
      ambiguous.push(a.keys[i]!);
      bounds.set(a.keys[i]!, [a.lowers[i]!, a.uppers[i]!]);
    }
    const c = part.candidates;
    for (let i = 0; i < c.keys.length; i++) {
      if (c.uppers[i]! < floor) continue;
      candidates.push(c.keys[i]!);
      bounds.set(c.keys[i]!, [c.lowers[i]!, c.uppers[i]!]);
    }
  }
  // Each key read once (a row can be both ambiguous and a candidate); a row not where its interval says is stale.
  const scores = new Map<number, number | undefined>();
  const exactOf = exactScorer(source, query);
  let stale = false;
  const scoreOf = (key: number): number | undefined => {
    if (scores.has(key)) return scores.get(key);
    const score = exactOf(key);
    const [lower, upper] = bounds.get(key)!;
    if (score === undefined || score < lower - DRIFT || score > upper + DRIFT) stale = true;
    scores.set(key, score);
    return score;
  };

  for (const key of ambiguous) {
    const score = scoreOf(key);
    if (score !== undefined && score >= minCosine) total++;
  }
  // Highest upper bound first: once k exact scores are in, a candidate whose upper bound is below the k-th cannot
  // enter, nor can any after it, and none of them is read.
  candidates.sort((a, b) => bounds.get(b)![1] - bounds.get(a)![1]);
  const topKeys: number[] = [];
  const topScores: number[] = [];
  for (const key of candidates) {
    if (topScores.length === k && bounds.get(key)![1] < topScores[k - 1]!) break;
    const score = scoreOf(key);
    if (score === undefined || score < minCosine || score < floor) continue;
    insertTop(topKeys, topScores, k, key, score);
  }
  return { keys: topKeys, scores: topScores, total, stale };
}

/** One part re-ranked in its scan thread: its exact top-k and count; `stale` as rerank's. */
export interface RankedPart extends PartResult {
  stale: boolean;
}

/** What a scan thread returns for a part: the pre-scan for the caller to re-rank, or the part already re-ranked. */
export type PartOutcome = { prescan: Prescan } | { ranked: RankedPart };

/**
 * A search's answer from its parts' outcomes: the pre-scans re-ranked together here (from `source`), then merged with
 * the parts ranked in their threads. Each is the exact top-k and count of its rows, so the merge is exact.
 */
export function finishParts(parts: readonly PartOutcome[], k: number, minCosine: number, query: Float32Array,
  source: VectorSource): RankedPart {
  const prescans: Prescan[] = [];
  const ranked: RankedPart[] = [];
  for (const part of parts) {
    if ('ranked' in part) ranked.push(part.ranked);
    else prescans.push(part.prescan);
  }
  if (prescans.length > 0) ranked.push(rerank(prescans, k, minCosine, query, source));
  if (ranked.length === 1) return ranked[0]!;
  const merged: RankedPart = { keys: [], scores: [], total: 0, stale: false };
  for (const part of ranked) {
    merged.total += part.total;
    merged.stale ||= part.stale;
    part.keys.forEach((key, i) => insertTop(merged.keys, merged.scores, k, key, part.scores[i]!));
  }
  return merged;
}

/**
 * How far outside its interval a re-read row's score may fall before it counts as changed: the intervals already hold
 * the float rounding (quantize.ts), so anything past this is another vector.
 */
const DRIFT = 1e-6;

function kthLargest(values: number[], k: number): number {
  return values.sort((a, b) => b - a)[k - 1]!;
}
