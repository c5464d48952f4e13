/**
 * Symmetric int8 quantisation with a per-vector scale, and the error bound that makes the int8 pre-scan exact.
 *
 * For a unit row x with scale s and codes c (x = s·c + e) and a unit query q with scale t and codes d (q = t·d + f):
 *   x·q = s·t·(c·d) + s·(c·f) + e·q,   so   |x·q − s·t·(c·d)| ≤ (‖x‖ + ‖e‖)·‖f‖ + ‖e‖·‖q‖.
 * The pre-scan computes s·t·(c·d) for every row and keeps only rows whose upper bound can still reach the k-th best
 * lower bound; those few are re-scored exactly from the float32 rows. Cauchy–Schwarz makes the bound loose but
 * certain, so the re-ranked answer is the exact one.
 */
export const CODE_MAX = 127;

/**
 * The int8 code of `v` (a value already divided by the scale): the nearest integer, ties up, within ±CODE_MAX.
 * floor(v + 0.5) rather than Math.round, which V8 runs several times slower here (the cold-start load quantises
 * every value of every vector); the two differ only where v + 0.5 rounds up in float64 (v just under a half), and
 * any integer code is correct: the error stored is that of the code written.
 */
export function codeOf(v: number): number {
  const c = Math.floor(v + 0.5);
  return c > CODE_MAX ? CODE_MAX : c < -CODE_MAX ? -CODE_MAX : c;
}

/** Slack for ‖x‖, ‖q‖ (unit up to float32 rounding) and for the float64 arithmetic of the bound itself. */
const NORM_SLACK = 1 + 1e-6;
const ABS_SLACK = 1e-9;

/**
 * Writes the codes of `vector[offset .. offset+dims)` into `codes[codeOffset ..]` and returns [scale, ‖e‖], ‖e‖
 * rounded up. The scale is stored as float32, so the residual is computed with that float32 value.
 */
export function quantizeInto(vector: Float32Array, offset: number, dims: number, codes: Int8Array, codeOffset: number): [number, number] {
  let max = 0;
  for (let i = 0; i < dims; i++) max = Math.max(max, Math.abs(vector[offset + i]!));
  const scale = Math.fround(max / CODE_MAX);
  if (scale === 0) {
    for (let i = 0; i < dims; i++) codes[codeOffset + i] = 0;
    return [0, 0];
  }
  let sq = 0;
  for (let i = 0; i < dims; i++) {
    const x = vector[offset + i]!;
    const c = codeOf(x / scale);
    codes[codeOffset + i] = c;
    const e = x - scale * c;
    sq += e * e;
  }
  return [scale, roundErrorUp(Math.sqrt(sq))];
}

/** ‖e‖ as stored: rounded up, so that float rounding in the bound can only widen it. */
export const roundErrorUp = (norm: number): number => norm * NORM_SLACK + ABS_SLACK;

/** The half-width of the interval around the pre-scan score that holds the exact one. */
export function errorBound(rowError: number, queryError: number): number {
  return (NORM_SLACK + rowError) * queryError + NORM_SLACK * rowError + ABS_SLACK;
}

/**
 * The half-width of a refined score's interval: with x = s·c + s2·c2 + e2 and the float query q (‖q‖ ≤ NORM_SLACK),
 * x·q − (s·c + s2·c2)·q = e2·q, and |e2·q| ≤ ‖e2‖·‖q‖; the float64 sum of 1536 products errs far below ABS_SLACK.
 */
export function residualErrorBound(residualError: number): number {
  return NORM_SLACK * residualError + ABS_SLACK;
}

/** A unit query's int8 codes widened to int16 (the kernel's layout), its scale and ‖f‖. */
export interface QuantizedQuery {
  codes: Int16Array;
  scale: number;
  error: number;
}

export function quantizeQuery(unit: Float32Array, stride: number): QuantizedQuery {
  const codes8 = new Int8Array(stride);
  const [scale, error] = quantizeInto(unit, 0, unit.length, codes8, 0);
  return { codes: Int16Array.from(codes8), scale, error };
}
