import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEmbedder, type LocalEmbedder } from '../../src/adapters/embeddings/local/local.embedder.ts';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';

/**
 * A search while the bundled model embeds an ingest: its query is served ahead of the texts queued for the writes
 * (EmbedOptions.urgent), so it answers after the model call under way, not after the whole ingest (measured once
 * before the change: a search sent during 80 concurrent creates waited 3.1 s for all of them, 18 ms idle).
 */
describe('G1 search during an ingest with the bundled model', () => {
  let t: TestApp;
  let model: LocalEmbedder;
  let api: ReturnType<typeof g1>;
  let budget: string;

  beforeAll(async () => {
    // One worker, one call in it at once: the model embeds one text after another, in the order it is given them.
    model = createLocalEmbedder({ workers: 1, pipelineDepth: 1 });
    await model.warmup();
    t = await createTestApp({ overrides: { embedder: model } });
    api = g1(t.app, await t.key({ tier: 'enterprise' }));
    const res = await api.create({ title: 'Budget', content: 'The quarterly budget was signed by Dana on Monday.' });
    expect(res.statusCode).toBe(201);
    budget = json(res).data.id as string;
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  it('answers before the creates queued ahead of it, with the memory it finds', async () => {
    const answered: string[] = [];
    const before = model.stats().texts;
    const creates = Array.from({ length: 12 }, (_, i) => api.create({ title: `Note ${i}`, content: `Imported note ${i} about the office move and the new desks` })
      .then((res) => { answered.push(`create ${i}`); return res; }));
    // Every create's text has reached the model (embedded, in the worker or waiting) before the search is sent; most
    // are still waiting (one model call at a time).
    const arrived = () => { const s = model.stats(); return s.texts - before + s.callsOut + s.queued; };
    const giveUp = Date.now() + 20_000;
    while (arrived() < 12) {
      if (Date.now() > giveUp) throw new Error(`only ${arrived()} of 12 create texts reached the model`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(model.stats().queued).toBeGreaterThanOrEqual(8);
    const search = api.search({ query: 'who signed the budget?', limit: 3, threshold: 0 })
      .then((res) => { answered.push('search'); return res; });

    const [found, ...created] = await Promise.all([search, ...creates]);
    expect(found.statusCode).toBe(200);
    expect(json(found).data.results[0].id).toBe(budget);
    for (const res of created) expect(res.statusCode).toBe(201);
    // The search waited for the model call under way (and at most one more that ended meanwhile), not for the queue.
    expect(answered.indexOf('search')).toBeLessThanOrEqual(2);
    expect(answered).toHaveLength(13);
  });
});
