import { createRng } from '../lib/prng.ts';

/**
 * Reproducible random vectors, generated row by row into a reused buffer so that no third copy of the data set is
 * ever held: the same seed gives the same rows, so the matrix and the plain array can be filled in separate passes.
 */
export function forEachRandomVector(seed: number, rows: number, dims: number, fn: (row: number, vector: Float32Array) => void): void {
  const rng = createRng(seed);
  const vector = new Float32Array(dims);
  for (let row = 0; row < rows; row++) {
    for (let i = 0; i < dims; i++) vector[i] = rng.next() * 2 - 1;
    fn(row, vector);
  }
}
