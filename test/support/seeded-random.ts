/** A seeded linear congruential generator, uniform in [0, 1): randomised tests draw the same cases on every run. */
export function seededRandom(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}
