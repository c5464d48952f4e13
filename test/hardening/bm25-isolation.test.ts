import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { g3 } from '../g3/client.ts';

/**
 * Keyword scores must not leak across tenants: if BM25 counted every tenant's documents, tenant B could learn which
 * words tenant A uses by writing documents with a word and watching its own scores, or A's, move.
 */
describe('keyword (BM25) scores stay within the tenant', () => {
  let t: TestApp;
  let alpha: string;
  let beta: string;
  beforeAll(async () => {
    t = await createTestApp();
    alpha = await t.key({ tenant: 'alpha' });
    beta = await t.key({ tenant: 'beta' });
  });
  afterAll(() => t.close());

  const write = async (key: string, title: string, content: string) => {
    const res = await g1(t.app, key).create({ title, content });
    expect(res.statusCode, res.body).toBe(201);
  };
  // Keyword weight only, so each score is the memory's BM25 relative to the best hit; and the default blend too.
  const scoresOf = async (key: string) => Promise.all([
    // No relevance floor (threshold 0): every keyword hit's score shows.
    { query: 'deploy pasta tomato', semanticWeight: 0, keywordWeight: 1, rerank: false, threshold: 0 },
    { query: 'deploy pasta tomato', threshold: 0 },
  ].map(async (body) => {
    const res = await g3(t.app, key).hybrid(body);
    expect(res.statusCode, res.body).toBe(200);
    const out = json(res);
    return { keywordResults: out.keyword_results, matches: out.matches.map((m: Json) => ({ id: m.id, score: m.score })) };
  }));

  it("leaves A's hybrid scores unchanged when B writes documents with A's words", async () => {
    await write(alpha, 'Deploy guide', 'How we deploy services to production, with a quick deploy checklist');
    await write(alpha, 'Notes', 'Lunch, then a quick deploy, then pasta and more lunch');
    await write(alpha, 'Cooking', 'Pasta with tomatoes and basil, ready in twenty minutes');
    await write(alpha, 'Travel', 'Train to Lyon on Friday, back on Sunday');
    await write(alpha, 'Books', 'Finish the novel before the club meets');
    const before = await scoresOf(alpha);
    expect(before[0]!.keywordResults).toBe(3);
    // Not every score is 1 or 0: the scores depend on the statistics, so a leak would show.
    expect(before[0]!.matches.some((m: { score: number }) => m.score > 0 && m.score < 1)).toBe(true);

    for (let i = 0; i < 30; i++) {
      await write(beta, i % 2 ? 'Pasta night' : 'Tomato harvest', `${'pasta tomato '.repeat(1 + (i % 5))}${'and other words '.repeat(i)}`);
    }
    const betaScores = await scoresOf(beta);
    expect(betaScores[0]!.keywordResults).toBe(30);
    expect(await scoresOf(alpha)).toEqual(before);
  });
});
