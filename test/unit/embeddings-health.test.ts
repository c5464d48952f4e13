import { describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { embeddingsHealth, EMBEDDINGS_HEALTH_MAX_AGE_MS } from '../../src/app/embeddings-health.ts';
import type { VectorCoverage } from '../../src/core/memories/memory-maintenance.ts';

describe('/health embeddings coverage', () => {
  const embedder = createHashingEmbedder({ dimensions: 64 });
  const model = embedder.modelId;

  it('says needed until every memory has a vector of the configured model, and names the other models', async () => {
    let coverage: VectorCoverage = { memories: 3, models: [{ modelId: 'other', dims: 8, vectors: 3 }, { modelId: model, dims: 64, vectors: 1 }] };
    let t = 0;
    const health = embeddingsHealth({ vectorCoverage: async () => coverage }, embedder, () => t);
    expect(await health()).toEqual({ model, dimensions: 64, reindex: { state: 'needed', done: 1, total: 3 }, other_models: [{ model: 'other', dimensions: 8, vectors: 3 }] });
    coverage = { memories: 3, models: [{ modelId: model, dims: 64, vectors: 3 }] };
    t += 1;
    expect(await health()).toMatchObject({ reindex: { state: 'complete', done: 3, total: 3 }, other_models: [] });
  });

  it('reuses a slow count for 100 times as long as it took, at most the maximum age', async () => {
    let t = 0;
    let counts = 0;
    const health = embeddingsHealth({ vectorCoverage: async () => { counts++; t += 50; return { memories: 0, models: [] }; } }, embedder, () => t);
    await health();
    t += 4_000;
    await health();
    expect(counts).toBe(1); // 50 ms to count: reused for 5 s
    t += 1_001;
    await health();
    expect(counts).toBe(2);
    const slow = embeddingsHealth({ vectorCoverage: async () => { counts++; t += 1_000; return { memories: 0, models: [] }; } }, embedder, () => t);
    await slow();
    t += EMBEDDINGS_HEALTH_MAX_AGE_MS;
    await slow();
    expect(counts).toBe(4);
  });

  it('answers without coverage when the store fails, and asks again next time', async () => {
    let fail = true;
    const health = embeddingsHealth({ vectorCoverage: async () => { if (fail) throw new Error('down'); return { memories: 0, models: [] }; } }, embedder, () => 0);
    expect(await health()).toEqual({ model, dimensions: 64, reindex: null, other_models: [] });
    fail = false;
    expect((await health()).reindex).toEqual({ state: 'complete', done: 0, total: 0 });
  });
});
