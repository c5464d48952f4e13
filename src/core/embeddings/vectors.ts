/** Vector arithmetic shared by every adapter and surface. */

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

/** docs/architecture.md, "Scores": `similarity_score = (1 + cosine) / 2`, so the spec's default threshold 0.7 means cosine >= 0.4. */
export const similarityFromCosine = (cos: number): number => clamp01((1 + cos) / 2);
export const cosineFromSimilarity = (similarity: number): number => similarity * 2 - 1;
/** `vector_distance = 1 - cosine`. */
export const distanceFromCosine = (cos: number): number => 1 - cos;

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

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
