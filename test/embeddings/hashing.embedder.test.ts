import { describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { cosine, norm } from '../../src/core/embeddings/vectors.ts';

describe('hashing embedder', () => {
  const embedder = createHashingEmbedder();

  it('names its model and width', () => {
    expect(embedder.modelId).toBe('hashing:v1-512');
    expect(embedder.dimensions).toBe(512);
    const narrow = createHashingEmbedder({ dimensions: 64 });
    expect(narrow.modelId).toBe('hashing:v1-64');
    expect(narrow.dimensions).toBe(64);
  });

  it('is deterministic across calls and instances', async () => {
    const text = 'Deterministic vectors, every single time!';
    const [a] = await embedder.embed([text]);
    const [b] = await createHashingEmbedder().embed([text]);
    expect(Array.from(a!)).toEqual(Array.from(b!));
  });

  it('returns unit vectors of the configured width', async () => {
    const vectors = await createHashingEmbedder({ dimensions: 256 }).embed(['hello world', 'Grüße aus Köln 2024', 'x']);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(256);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('gives blank text (and text without words) the zero vector, in its slot', async () => {
    const [blank, spaces, punctuation, word] = await embedder.embed(['', '  \n\t', '?!', 'word']);
    for (const v of [blank, spaces, punctuation]) {
      expect(v).toHaveLength(512);
      expect(norm(v!)).toBe(0);
    }
    expect(norm(word!)).toBeCloseTo(1, 5);
  });

  it('ignores case and punctuation', async () => {
    const [a, b] = await embedder.embed(['Hello, World!', 'hello world']);
    expect(cosine(a!, b!)).toBeCloseTo(1, 5);
  });

  it('puts similar texts closer than unrelated ones', async () => {
    const [query, near, far] = await embedder.embed([
      'the quick brown fox jumps over the lazy dog',
      'a quick brown fox jumped over a lazy dog',
      'quarterly revenue grew by ten percent',
    ]);
    expect(cosine(query!, near!)).toBeGreaterThan(0.4);
    expect(cosine(query!, near!)).toBeGreaterThan(cosine(query!, far!) + 0.3);
  });

  it('rewards shared spelling through character trigrams', async () => {
    const [a, b, c] = await embedder.embed(['embedding', 'embeddings', 'giraffe']);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!));
  });

  it('is fast', async () => {
    const texts = Array.from({ length: 1000 }, (_, i) => `memory ${i}: the service stores notes and finds them again by meaning`);
    const start = performance.now();
    await embedder.embed(texts);
    expect(performance.now() - start).toBeLessThan(1000);
  });
});
