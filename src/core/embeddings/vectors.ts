import type { FieldProblem } from '../errors.ts';

/** Vector arithmetic shared by every adapter and surface, and the check of caller-supplied vectors. */

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += a[i]! * b[i]!;
  return sum;
}

export function norm(a: ArrayLike<number>): number {
  return Math.sqrt(dot(a, a));
}

/** Cosine similarity; 0 when either vector is all zeros (nothing to compare). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const na = norm(a);
  const nb = norm(b);
  if (na === 0 || nb === 0) return 0;
  return dot(a, b) / (na * nb);
}

/** A unit-length copy (the zero vector stays zero). */
export function normalized(v: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(v as ArrayLike<number>);
  const n = norm(out);
  if (n > 0) for (let i = 0; i < out.length; i++) out[i]! /= n;
  return out;
}

/** `vector_distance = 1 - cosine` (uncalibrated; the similarity score is core/search/score-calibration.ts's). */
export const distanceFromCosine = (cos: number): number => 1 - cos;

/**
 * Zero-pads a native vector to an API width (1024 for G5, 1536 for G4). Padding with zeros preserves cosine
 * exactly. A vector wider than the API width cannot be shown at that width.
 */
export function padVector(v: ArrayLike<number>, width: number): number[] {
  if (v.length > width) throw new RangeError(`vector of ${v.length} dimensions does not fit in ${width}`);
  const out = new Array<number>(width).fill(0);
  for (let i = 0; i < v.length; i++) out[i] = v[i]!;
  return out;
}

/** Inverse of padVector for caller-supplied vectors: the tail beyond `width` must be zeros to be comparable. */
export function truncatePadded(v: ArrayLike<number>, width: number): Float32Array | null {
  for (let i = width; i < v.length; i++) if (v[i] !== 0) return null;
  return Float32Array.from(Array.prototype.slice.call(v, 0, width) as number[]);
}

/** The largest finite 32-bit float: vectors are stored and compared as Float32Array. */
export const FLOAT32_MAX = 3.4028234663852886e38;

/** What a surface asks of a caller-supplied vector beyond the common rules. */
export interface SuppliedVectorRule {
  /** The exact number of entries (the surface's API width). */
  width: number;
  /** Whether the zero vector is refused (a search by it has no direction; G2 stores one as given). */
  refuseZero: boolean;
}

/**
 * The one check of a caller-supplied vector (G2 `embedding`, G4 `vector`): an array of exactly `rule.width`
 * numbers, each finite and within the 32-bit float range (1e39 is a finite double but Infinity once stored), and,
 * when the rule says so, not all zeros. Every problem is returned, the width's first (a surface may shorten the
 * list when it renders it); none: valid.
 */
export function suppliedVectorProblems(raw: unknown, field: string, rule: SuppliedVectorRule): FieldProblem[] {
  if (!Array.isArray(raw)) return [{ field, reason: 'invalid_type', message: `must be an array of ${rule.width} numbers` }];
  const problems: FieldProblem[] = [];
  if (raw.length !== rule.width) problems.push({ field, reason: 'invalid_value', message: `must have exactly ${rule.width} numbers (got ${raw.length})` });
  raw.forEach((x: unknown, i) => {
    if (typeof x !== 'number') problems.push({ field: `${field}[${i}]`, reason: 'invalid_type', message: 'must be a number' });
    else if (!Number.isFinite(x)) problems.push({ field: `${field}[${i}]`, reason: 'invalid_value', message: 'must be a finite number' });
    else if (Math.abs(x) > FLOAT32_MAX) {
      problems.push({ field: `${field}[${i}]`, reason: 'out_of_range', message: 'must be within the 32-bit float range (about ±3.4e38)' });
    }
  });
  if (problems.length === 0 && rule.refuseZero && raw.every((x) => x === 0)) {
    problems.push({ field, reason: 'invalid_value', message: 'must not be all zeros (it has no direction to compare)' });
  }
  return problems;
}
