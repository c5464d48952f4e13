import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedLocalModel } from '../support/shared-local-model.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { g3, ids } from '../g3/client.ts';

/**
 * Hybrid search's default relevance floor on the G3 surface with the bundled model, every parameter but the query left
 * at its default (as the MCP tool and the dashboard ask): a question nothing stored answers comes back empty, a
 * paraphrase still finds its memory, and a lookup by a word the memory holds finds it where semantic search at its
 * default does not. A few memories of the paraphrase set (test/fixtures/paraphrase-set.json), chosen with a margin
 * over the floor; the trade-off over the whole set is `npm run bench:floor` (BENCHMARKS.md). SQLite only: what is
 * tested is the core's floor and the model, not the store (test/services/search-floor.service.test.ts).
 */
interface ParaphraseSet { pairs: { title: string; content: string; question: string }[] }
const SET = JSON.parse(readFileSync(new URL('../fixtures/paraphrase-set.json', import.meta.url), 'utf8')) as ParaphraseSet;
const TITLES = ['On-call', 'Fuse box', 'Allergy', 'Running', 'Car rental', 'Train pass', 'Cache', 'Paint colour', 'Landlord', 'Dentist'];

describe('G3 hybrid at its defaults, bundled model', () => {
  let t: TestApp;
  let api: ReturnType<typeof g3>;
  const idOf = new Map<string, string>();
  const pair = (title: string) => SET.pairs.find((p) => p.title === title)!;

  beforeAll(async () => {
    // The process's shared model (test/support/shared-local-model.ts) loads while the app starts, unless loaded already.
    const model = sharedLocalModel();
    const [app] = await Promise.all([createTestApp({ overrides: { embedder: model } }), model.warmup()]);
    t = app;
    const key = await t.key({ tier: 'enterprise' });
    api = g3(t.app, key);
    const created = await Promise.all(TITLES.map((title) => g1(t.app, key).create({ title, content: pair(title).content })));
    created.forEach((res, i) => {
      expect(res.statusCode, res.body).toBe(201);
      idOf.set(TITLES[i]!, json(res).data.id as string);
    });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const hybrid = async (body: Json) => {
    const res = await api.hybrid(body);
    expect(res.statusCode, res.body).toBe(200);
    return json(res);
  };

  it('answers an unrelated question with nothing, which the floor alone empties', async () => {
    for (const query of ['What is the capital of Peru?', 'How many bones are in the human body?', 'Who composed the Four Seasons?']) {
      const body = await hybrid({ query });
      expect(body.matches, query).toEqual([]);
      expect(body.total, query).toBe(0);
      // Without the floor every candidate comes back.
      expect((await hybrid({ query, threshold: 0 })).matches.length, query).toBeGreaterThan(0);
    }
  });

  it('still puts the right memory first for a paraphrased question', async () => {
    for (const title of ['Allergy', 'Fuse box', 'Running']) {
      expect(ids((await hybrid({ query: pair(title).question })).matches)[0], title).toBe(idOf.get(title));
    }
  });

  it('finds a memory by a word it holds that the model rates below the floor, highlighting the query words only', async () => {
    const semantic = json(await api.search({ query: 'Eurail' }));
    expect(ids(semantic.matches)).not.toContain(idOf.get('Train pass'));
    expect(ids((await hybrid({ query: 'Eurail' })).matches)[0]).toBe(idOf.get('Train pass'));

    const body = await hybrid({ query: 'Where do I collect the hire car?' });
    expect(ids(body.matches)[0]).toBe(idOf.get('Car rental'));
    const marked = (body.matches[0].highlights as string[]).join(' ').match(/<mark>[^<]*<\/mark>/g);
    expect(marked).toEqual(['<mark>car</mark>']);
  });
});
