import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HYBRID_METHOD_RERANK, rerankedMethod } from '../../src/core/search/search.service.ts';
import { captureLogs, WARN_LEVEL, type LogCapture } from '../support/log-capture.ts';
import { startMockRerankServer, type MockRerankServer } from '../support/mock-rerank-server.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { g3, ids } from '../g3/client.ts';

/**
 * The reranker through the whole app: MNEMO_RERANK_* configure it, G3 /hybrid (as every hybrid surface) asks a real
 * loopback server speaking Cohere's protocol, and the answer follows the reranker's scores, its floor, and hybrid's
 * own order whenever the reranker fails or is too slow. Every memory below holds every word of the query, so all
 * pass hybrid's own floor (coverage 1) and only the reranker tells them apart.
 */
const QUERY = 'garden shed key';
const MEMORIES = [
  { title: 'Shed', content: 'The garden shed key hangs on the hook by the back door.' },
  { title: 'Neighbour', content: 'Anna next door keeps a spare garden shed key.' },
  { title: 'Drawer', content: 'Another garden shed key lies in the kitchen drawer, under the batteries.' },
];

describe('hybrid search with a reranker', () => {
  let server: MockRerankServer;
  let logs: LogCapture;
  let t: TestApp;
  let api: ReturnType<typeof g3>;
  const idOf = new Map<string, string>();
  const titleOf = (id: string) => [...idOf].find(([, v]) => v === id)![0];

  beforeAll(async () => {
    server = await startMockRerankServer('cohere');
    server.requireKey('rk-secret');
    logs = captureLogs();
    t = await createTestApp({
      env: {
        MNEMO_RERANK_URL: server.url, MNEMO_RERANK_MODEL: 'rerank-v3.5', MNEMO_RERANK_API_KEY: 'rk-secret',
        MNEMO_RERANK_TIMEOUT_MS: '1000',
      },
      server: logs.server,
    });
    const key = await t.key();
    api = g3(t.app, key);
    for (const m of MEMORIES) {
      const res = await g1(t.app, key).create(m);
      expect(res.statusCode, res.body).toBe(201);
      idOf.set(m.title, json(res).data.id as string);
    }
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.setDelay(0);
  });

  const hybrid = async (body: Json) => {
    const res = await api.hybrid({ query: QUERY, ...body });
    expect(res.statusCode, res.body).toBe(200);
    return json(res);
  };
  /** Hybrid's own answer: the reranker refuses (500), so the search answers without it. */
  const ownAnswer = async (body: Json = {}) => {
    server.failNext(1, 500);
    const own = await hybrid(body);
    expect(own.combined_score_method).toBe(HYBRID_METHOD_RERANK);
    return own;
  };
  /** The reranker's relevance for each memory, by title. */
  const relevance = (byTitle: Record<string, number>) =>
    server.setRelevance((_q, doc) => byTitle[MEMORIES.find((m) => doc.startsWith(`${m.title}\n`))!.title]!);

  it('orders the answer by the reranker\'s scores, and drops what it scores below the floor', async () => {
    const own = await ownAnswer();
    const hybridOrder = ids(own.matches).map(titleOf);
    expect(hybridOrder).toHaveLength(3);
    expect(own.total).toBe(3);
    // The reranker reverses hybrid's order, and scores hybrid's best below the floor (0.7).
    relevance({ [hybridOrder[0]!]: 0.2, [hybridOrder[1]!]: 0.8, [hybridOrder[2]!]: 0.95 });

    const body = await hybrid({});
    expect(ids(body.matches).map(titleOf)).toEqual([hybridOrder[2], hybridOrder[1]]);
    expect(body.matches.map((m: Json) => m.score)).toEqual([0.95, 0.8]);
    expect(body.total).toBe(2);
    expect(body.combined_score_method).toBe(rerankedMethod('rerank-v3.5', HYBRID_METHOD_RERANK));
    expect(body.combined_score_method).toBe('cross_encoder(rerank-v3.5) over weighted_sum(calibrated_similarity, keyword_coverage)');
    // The rest of the answer is hybrid's as before: highlights of the query's words, the legs' counts.
    expect(body.matches[0].highlights.join(' ')).toContain('<mark>garden</mark>');
    expect(body.semantic_results).toBe(own.semantic_results);
    expect(body.keyword_results).toBe(own.keyword_results);

    // What the server was asked: the candidates as title and content, with the key.
    const [request] = server.requests;
    expect(request!.headers.authorization).toBe('Bearer rk-secret');
    expect(request!.body).toMatchObject({ model: 'rerank-v3.5', query: QUERY, top_n: 3 });
    expect(request!.body.documents).toEqual(hybridOrder.map((title) => `${title}\n${MEMORIES.find((m) => m.title === title)!.content}`));

    // Threshold 0: no floor, the reranker's order over every candidate.
    const all = await hybrid({ threshold: 0 });
    expect(ids(all.matches).map(titleOf)).toEqual([...hybridOrder].reverse());
    expect(all.total).toBe(3);
  });

  it('reranks hybrid\'s best N candidates (20 by default), not only the page: topK 1 can bring up hybrid\'s third', async () => {
    const hybridOrder = ids((await ownAnswer()).matches).map(titleOf);
    relevance({ [hybridOrder[0]!]: 0.75, [hybridOrder[1]!]: 0.72, [hybridOrder[2]!]: 0.99 });
    server.requests.length = 0;
    const body = await hybrid({ topK: 1 });
    expect(ids(body.matches).map(titleOf)).toEqual([hybridOrder[2]]);
    expect(body.total).toBe(3);
    expect((server.requests[0]!.body.documents as string[]).length).toBe(3);
  });

  it('answers in hybrid\'s own order, quickly, when the reranker sleeps past its timeout, and warns once', async () => {
    const own = await ownAnswer();
    relevance({ Shed: 0.9, Neighbour: 0.9, Drawer: 0.9 });
    server.setDelay(6000);
    const from = logs.lines.length;
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      const body = await hybrid({});
      // MNEMO_RERANK_TIMEOUT_MS is 1000: far below the server's 6 s (and the search's own 10 s deadline).
      expect(performance.now() - started).toBeLessThan(4000);
      expect(ids(body.matches)).toEqual(ids(own.matches));
      expect(body.matches.map((m: Json) => m.score)).toEqual(own.matches.map((m: Json) => m.score));
      expect(body.total).toBe(own.total);
      expect(body.combined_score_method).toBe(HYBRID_METHOD_RERANK);
    }
    const warnings = logs.atLeast(WARN_LEVEL, from).filter((l) => l.rerankFailure !== undefined);
    expect(warnings.map((l) => l.rerankFailure)).toEqual(['timeout']);
    expect(warnings[0]!.msg).toMatch(/within 1000 ms/);
    expect(JSON.stringify(logs.lines)).not.toContain('rk-secret');
    const counts = (await t.container.metrics.render()).split('\n').filter((l) => l.startsWith('mnemo_rerank_duration_seconds_count'));
    const count = (outcome: string) => Number(counts.find((l) => l.includes(`outcome="${outcome}"`))?.split(' ')[1] ?? 0);
    expect(count('timeout'), counts.join('\n')).toBe(2);
    expect(count('unavailable'), counts.join('\n')).toBeGreaterThan(0);
    expect(count('ok'), counts.join('\n')).toBeGreaterThan(0);
  });

  it('asks nothing when nothing reaches hybrid\'s floor', async () => {
    const body = await hybrid({ query: 'volcanic eruption forecast' });
    expect(body.matches).toEqual([]);
    expect(body.total).toBe(0);
    expect(server.requests).toEqual([]);
  });
});

describe('hybrid search without MNEMO_RERANK_URL', () => {
  it('never calls a reranker and keeps hybrid\'s own scores', async () => {
    const server = await startMockRerankServer('cohere');
    const t = await createTestApp();
    try {
      expect(t.container.config.rerank).toBeNull();
      const key = await t.key();
      for (const m of MEMORIES) expect((await g1(t.app, key).create(m)).statusCode).toBe(201);
      const res = await g3(t.app, key).hybrid({ query: QUERY, topK: 1 });
      expect(res.statusCode, res.body).toBe(200);
      const body = json(res);
      expect(body.matches).toHaveLength(1);
      expect(body.total).toBe(3);
      expect(body.combined_score_method).toBe(HYBRID_METHOD_RERANK);
      expect(server.requests).toEqual([]);
      expect(await t.container.metrics.render()).not.toMatch(/mnemo_rerank_duration_seconds_count/);
    } finally {
      await t.close();
      await server.close();
    }
  });
});
