/**
 * The keys a search may score (a prefilter's result, kept by a cache), with the row mask a matrix last built from
 * them: a search reuses that mask while the matrix's rows stay where they were (VectorMatrix.prepare), so a cached
 * prefilter costs the scan nothing beyond the scan.
 */
export class AllowedKeys {
  /** The mask last built, and which matrix and row layout it was built for (`id:layout`). */
  mask: Uint8Array | null = null;
  builtFor = '';

  constructor(readonly keys: readonly number[] | Float64Array) {}
}
