/**
 * The plain baseline the VectorMatrix is compared with: unit vectors back to back in one Float32Array, one straight
 * loop of dot products, and the k best kept in a small sorted array by insertion. No abstraction at all.
 */
export interface PlainHits {
  rows: Int32Array;
  scores: Float64Array;
  count: number;
}

/** Normalises `vector` into `out` exactly as VectorMatrix.upsert does (float64 sum, one multiply per element). */
export function normaliseInto(vector: ArrayLike<number>, out: Float32Array, offset = 0): void {
  const dims = vector.length;
  let sq = 0;
  for (let i = 0; i < dims; i++) sq += vector[i]! * vector[i]!;
  const inv = sq > 0 ? 1 / Math.sqrt(sq) : 0;
  for (let i = 0; i < dims; i++) out[offset + i] = vector[i]! * inv;
}

/** The k rows of `data` with the highest dot product with `rawQuery` (normalised first, as the matrix does). */
export function plainTopK(data: Float32Array, rows: number, dims: number, rawQuery: Float32Array, k: number): PlainHits {
  const query = new Float32Array(dims);
  normaliseInto(rawQuery, query);
  const bestRows = new Int32Array(k);
  const bestScores = new Float64Array(k);
  let count = 0;
  for (let row = 0; row < rows; row++) {
    const base = row * dims;
    let s = 0;
    for (let i = 0; i < dims; i++) s += data[base + i]! * query[i]!;
    if (count < k) {
      let j = count++;
      while (j > 0 && bestScores[j - 1]! < s) {
        bestScores[j] = bestScores[j - 1]!;
        bestRows[j] = bestRows[j - 1]!;
        j--;
      }
      bestScores[j] = s;
      bestRows[j] = row;
    } else if (s > bestScores[k - 1]!) {
      let j = k - 1;
      while (j > 0 && bestScores[j - 1]! < s) {
        bestScores[j] = bestScores[j - 1]!;
        bestRows[j] = bestRows[j - 1]!;
        j--;
      }
      bestScores[j] = s;
      bestRows[j] = row;
    }
  }
  return { rows: bestRows, scores: bestScores, count };
}
