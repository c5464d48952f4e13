import type { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { codeIndex, viewsOf } from '../../src/adapters/storage/sqlite/vector-scan/matrix-storage.ts';

/** One row of a vector matrix as the scan reads it: both code levels with their scales and error bounds. */
export interface MatrixRow {
  codes: number[];
  scale: number;
  error: number;
  residuals: number[];
  residualScale: number;
  residualError: number;
}

/** Every row of a matrix by key (all the matrix holds of it), for comparing matrices filled different ways. */
export function matrixRowsByKey(m: VectorMatrix): Map<number, MatrixRow> {
  const b = m.buffers();
  const v = viewsOf(b);
  const out = new Map<number, MatrixRow>();
  for (let row = 0; row < m.size; row++) {
    out.set(v.keys[row]!, {
      codes: Array.from({ length: b.stride }, (_, d) => v.codes[codeIndex(b, row, d)]!),
      scale: v.scales[row]!, error: v.errors[row]!,
      residuals: [...v.residuals.subarray(row * b.dims, (row + 1) * b.dims)],
      residualScale: v.residualScales[row]!, residualError: v.residualErrors[row]!,
    });
  }
  return out;
}
