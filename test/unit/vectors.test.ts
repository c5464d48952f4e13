import { describe, expect, it } from 'vitest';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { cosine, distanceFromCosine, padVector, suppliedVectorProblems, truncatePadded } from '../../src/core/embeddings/vectors.ts';

/** A seeded PRNG so failures reproduce. */
function rng(seed: number) {
  return () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
}
const randomVector = (dims: number, next: () => number) => Float32Array.from({ length: dims }, next);

describe('vector arithmetic', () => {
  it('maps cosine to the (uncalibrated) vector_distance of docs/api.md', () => {
    expect(distanceFromCosine(0.25)).toBe(0.75);
  });

  it('zero-pads without changing cosine, and refuses what does not fit', () => {
    const next = rng(1);
    const a = randomVector(512, next);
    const b = randomVector(512, next);
    const pa = padVector(a, 1536);
    expect(pa).toHaveLength(1536);
    expect(cosine(pa, padVector(b, 1536))).toBeCloseTo(cosine(a, b), 6);
    expect(truncatePadded(pa, 512)).toEqual(a);
    expect(truncatePadded([...pa.slice(0, 600), 1], 512)).toBeNull();
    expect(() => padVector(a, 256)).toThrow(RangeError);
    expect(cosine(new Float32Array(4), a.slice(0, 4))).toBe(0);
  });
});

describe('VectorMatrix', () => {
  it('agrees with a brute-force scan through inserts, replacements, removals and growth', () => {
    const next = rng(7);
    const dims = 32;
    const matrix = new VectorMatrix(dims, 4);
    const truth = new Map<number, Float32Array>();
    for (let key = 0; key < 300; key++) {
      const v = randomVector(dims, next);
      matrix.upsert(key, v);
      truth.set(key, v);
    }
    for (let key = 0; key < 300; key += 3) { matrix.remove(key); truth.delete(key); }
    for (let key = 1; key < 300; key += 7) { const v = randomVector(dims, next); matrix.upsert(key, v); truth.set(key, v); }
    expect(matrix.size).toBe(truth.size);
    expect(matrix.remove(0)).toBe(false);

    for (let q = 0; q < 20; q++) {
      const query = randomVector(dims, next);
      const expected = [...truth].map(([key, v]) => ({ key, cosine: cosine(query, v) })).sort((a, b) => b.cosine - a.cosine);
      const { hits, total } = matrix.search(query, 10, 0.1);
      const above = expected.filter((e) => e.cosine >= 0.1);
      expect(total).toBe(above.length);
      expect(hits.map((h) => h.key)).toEqual(above.slice(0, 10).map((e) => e.key));
      hits.forEach((h, i) => expect(h.cosine).toBeCloseTo(above[i]!.cosine, 5));
      const allowed = new Set([...truth.keys()].filter((k) => k % 2 === 0));
      const filtered = matrix.search(query, 5, -1, allowed);
      expect(filtered.hits.map((h) => h.key)).toEqual(expected.filter((e) => allowed.has(e.key)).slice(0, 5).map((e) => e.key));
    }
  });

  it('returns nothing for a zero query and refuses a wrong width', () => {
    const m = new VectorMatrix(4);
    m.upsert(1, [1, 0, 0, 0]);
    expect(m.search([0, 0, 0, 0], 5, -1)).toEqual({ hits: [], total: 0 });
    expect(() => m.search([1, 0], 5, -1)).toThrow(RangeError);
    expect(() => m.upsert(2, [1, 0])).toThrow(RangeError);
  });
});

describe('the one check of caller-supplied vectors (G2 embedding, G4 vector)', () => {
  const refuseZero = { width: 4, refuseZero: true };
  const keepZero = { width: 4, refuseZero: false };

  it('accepts exactly the width of finite 32-bit numbers', () => {
    expect(suppliedVectorProblems([0.5, -1, 0, 3.4e38], 'v', refuseZero)).toEqual([]);
  });

  it('names the width first, then each bad entry by index', () => {
    expect(suppliedVectorProblems([1, 'x', Infinity], 'v', refuseZero)).toEqual([
      { field: 'v', reason: 'invalid_value', message: 'must have exactly 4 numbers (got 3)' },
      { field: 'v[1]', reason: 'invalid_type', message: 'must be a number' },
      { field: 'v[2]', reason: 'invalid_value', message: 'must be a finite number' },
    ]);
    // 1e39 is a finite double, and Infinity as a 32-bit float.
    expect(suppliedVectorProblems([1, 0, -1e39, 0], 'embedding', keepZero))
      .toEqual([{ field: 'embedding[2]', reason: 'out_of_range', message: expect.stringMatching(/32-bit float range/) }]);
    expect(suppliedVectorProblems({ 0: 1 }, 'v', refuseZero)).toEqual([{ field: 'v', reason: 'invalid_type', message: 'must be an array of 4 numbers' }]);
  });

  it('refuses the zero vector only where the surface\'s rule says so', () => {
    expect(suppliedVectorProblems([0, 0, 0, 0], 'v', refuseZero)).toEqual([{ field: 'v', reason: 'invalid_value', message: expect.stringMatching(/all zeros/) }]);
    expect(suppliedVectorProblems([0, 0, 0, 0], 'v', keepZero)).toEqual([]);
    expect(suppliedVectorProblems([0, 0, 0, -0.001], 'v', refuseZero)).toEqual([]);
  });
});
