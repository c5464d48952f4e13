/**
 * Vectors from a few centres plus small noise, every 17th a repeat of the one before: many near-ties and exact ties,
 * and rows near any threshold — the hard case for a quantised pre-scan's exactness. Deterministic per seed.
 */
export function clustered(seed: number, count: number, dims: number, clusters: number, noise: number): Float32Array[] {
  let s = seed;
  const next = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 * 2 - 1; };
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, next));
  const out: Float32Array[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 17 === 5 && out.length > 0) { out.push(out[out.length - 1]!.slice()); continue; }
    out.push(Float32Array.from(centres[i % clusters]!, (x) => x + noise * next()));
  }
  return out;
}
