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
 */

/** Where a matrix's rows' float vectors are read, by key, as stored (not normalised). */
export interface VectorSource {
  /** The stored vector of `key`, or undefined when it is gone (deleted, re-embedded with another width). */
  read(key: number): ArrayLike<number> | undefined;
}

/**
 * The exact cosine of each key's row with the unit `query`, undefined for a key whose vector is gone: the row
 * normalised as the codes were made from it (unitRowInto) and scored by exactScore, so every path agrees to the bit.
 * The one function for "the exact score of row r for query q".
 */
export function exactScores(source: VectorSource, query: Float32Array, keys: readonly number[]): (number | undefined)[] {
  const dims = query.length;
  const unit = new Float32Array(dims);
  return keys.map((key) => {
    const vector = source.read(key);
    if (!vector || vector.length < dims) return undefined;
    unitRowInto(vector, dims, unit);
    return exactScore(unit, 0, query, dims);
  });
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
  PartResult & { stale: boolean } {
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
  const keys = [...bounds.keys()];
  const scores = new Map<number, number | undefined>();
  const exact = exactScores(source, query, keys);
  let stale = false;
  keys.forEach((key, i) => {
    const score = exact[i];
    const [lower, upper] = bounds.get(key)!;
    if (score === undefined || score < lower - DRIFT || score > upper + DRIFT) stale = true;
    scores.set(key, score);
  });

  for (const key of ambiguous) {
    const score = scores.get(key);
    if (score !== undefined && score >= minCosine) total++;
  }
  const topKeys: number[] = [];
  const topScores: number[] = [];
  for (const key of candidates) {
    const score = scores.get(key);
    if (score === undefined || score < minCosine || score < floor) continue;
    insertTop(topKeys, topScores, k, key, score);
  }
  return { keys: topKeys, scores: topScores, total, stale };
}

/**
 * How far outside its interval a re-read row's score may fall before it counts as changed: the intervals already hold
 * the float rounding (quantize.ts), so anything past this is another vector.
 */
const DRIFT = 1e-6;

function kthLargest(values: number[], k: number): number {
  return values.sort((a, b) => b - a)[k - 1]!;
}
