/**
 * The exact score of one stored row: the float64 sum of float32 products, four accumulators (lets the CPU overlap
 * the multiply-adds). Every path (the pre-scan's re-rank, the single-thread scan, the workers) scores with this one
 * function, so they agree to the last bit and rank ties identically.
 */
export function exactScore(data: Float32Array, base: number, query: Float32Array, dims: number): number {
  const body = dims - (dims % 4);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < body; i += 4) {
    const b = base + i;
    s0 += data[b]! * query[i]!;
    s1 += data[b + 1]! * query[i + 1]!;
    s2 += data[b + 2]! * query[i + 2]!;
    s3 += data[b + 3]! * query[i + 3]!;
  }
  for (let i = body; i < dims; i++) s0 += data[base + i]! * query[i]!;
  return s0 + s1 + s2 + s3;
}

/** Best first; equal scores by ascending key, so a result never depends on row order or on how a scan was split. */
export const better = (scoreA: number, keyA: number, scoreB: number, keyB: number): boolean =>
  scoreA > scoreB || (scoreA === scoreB && keyA < keyB);
