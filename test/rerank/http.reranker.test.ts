import { afterEach, describe, expect, it } from 'vitest';
import { createHttpReranker } from '../../src/adapters/rerank/http.reranker.ts';
import { RerankError } from '../../src/core/search/reranker.port.ts';
import { startMockRerankServer, type MockRerankServer, type RerankFlavour } from '../support/mock-rerank-server.ts';

const QUERY = 'where is the fuse box';
const DOCUMENTS = [
  'The dentist appointment is on Tuesday.',
  'The fuse box is in the cellar, behind the stairs.',
  'A box of fuses is kept in the garage.',
];
/** The relevance each document gets from the servers below, whatever their flavour. */
const RELEVANCE = [0.02, 0.97, 0.4];

let server: MockRerankServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(flavour: RerankFlavour) {
  server = await startMockRerankServer(flavour);
  server.setRelevance((_q, doc) => RELEVANCE[DOCUMENTS.indexOf(doc)]!);
  return server;
}

const rerankError = async (promise: Promise<unknown>): Promise<RerankError> => {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(RerankError);
  return err as RerankError;
};

describe('HTTP reranker', () => {
  it('speaks Cohere: its strict body, `results[].relevance_score` in index order', async () => {
    const s = await start('cohere');
    const reranker = createHttpReranker({ url: s.url, model: 'rerank-v3.5', timeoutMs: 2000 });
    const scores = await reranker.rerank(QUERY, DOCUMENTS);
    expect(scores).toEqual(RELEVANCE.map((score, index) => ({ index, score })));
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.url).toBe('/v2/rerank');
    expect(s.requests[0]!.body).toEqual({ model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS, top_n: 3 });
    expect(reranker.model).toBe('rerank-v3.5');
  });

  it('speaks Jina, and takes a URL that already ends in /rerank as it is', async () => {
    const s = await start('jina');
    const reranker = createHttpReranker({ url: `${s.url}/rerank/`, model: 'jina-reranker-v2-base-multilingual', timeoutMs: 2000 });
    expect(await reranker.rerank(QUERY, DOCUMENTS)).toEqual(RELEVANCE.map((score, index) => ({ index, score })));
    expect(s.requests.map((r) => r.url)).toEqual(['/v1/rerank']);
  });

  it('speaks TEI: after one refusal of the Cohere body, `texts` is sent from then on and `[{index, score}]` read', async () => {
    const s = await start('tei');
    const reranker = createHttpReranker({ url: s.url, timeoutMs: 2000 });
    expect(await reranker.rerank(QUERY, DOCUMENTS)).toEqual(RELEVANCE.map((score, index) => ({ index, score })));
    expect(s.requests.map((r) => Object.keys(r.body).sort())).toEqual([
      ['documents', 'query', 'top_n'], ['query', 'raw_scores', 'texts', 'truncate'],
    ]);
    expect(s.requests[1]!.body).toEqual({ query: QUERY, texts: DOCUMENTS, raw_scores: false, truncate: true });

    expect((await reranker.rerank(QUERY, DOCUMENTS.slice(1))).map((r) => r.score)).toEqual(RELEVANCE.slice(1));
    expect(s.requests).toHaveLength(3);
    expect(s.requests[2]!.body).toHaveProperty('texts');
    expect(s.requests.map((r) => r.url)).toEqual(['/rerank', '/rerank', '/rerank']);
  });

  it('maps llama.cpp\'s raw logits through the logistic, and keeps doing so for this server', async () => {
    const s = await start('llamacpp');
    const reranker = createHttpReranker({ url: s.url, timeoutMs: 2000 });
    const scores = await reranker.rerank(QUERY, DOCUMENTS);
    expect(s.requests[0]!.url).toBe('/v1/rerank');
    expect(s.requests[0]!.body).not.toHaveProperty('model');
    scores.forEach((r, i) => {
      expect(r.index).toBe(i);
      expect(r.score).toBeCloseTo(RELEVANCE[i]!, 6);
    });
    // Next, logits that all happen to lie in [0, 1] (0.5 here) are still read as logits: logistic(0.5) ≈ 0.6225.
    s.setRelevance(() => 1 / (1 + Math.exp(-0.5)));
    const [only] = await reranker.rerank(QUERY, DOCUMENTS.slice(0, 1));
    expect(only!.score).toBeCloseTo(0.6225, 3);
  });

  it('splits a long list into requests of at most 32 documents (TEI\'s default batch limit), scores in input order', async () => {
    const s = await startMockRerankServer('tei');
    server = s;
    const documents = Array.from({ length: 40 }, (_, i) => `document ${i}`);
    s.setRelevance((_q, doc) => Number(doc.split(' ')[1]) / 100);
    const scores = await createHttpReranker({ url: s.url, timeoutMs: 2000 }).rerank(QUERY, documents);
    expect(scores.map((r) => r.index)).toEqual(documents.map((_, i) => i));
    scores.forEach((r, i) => expect(r.score).toBeCloseTo(i / 100, 9));
    const sent = s.requests.filter((r) => 'texts' in r.body).map((r) => (r.body.texts as string[]).length).sort((a, b) => a - b);
    expect(sent).toEqual([8, 32]);
  });

  it('sends the key as a Bearer token and never shows it in an error', async () => {
    const s = await start('cohere');
    s.requireKey('secret-key-123');
    const good = createHttpReranker({ url: s.url, model: 'rerank-v3.5', apiKey: 'secret-key-123', timeoutMs: 2000 });
    await good.rerank(QUERY, DOCUMENTS);
    expect(s.requests[0]!.headers.authorization).toBe('Bearer secret-key-123');

    const wrong = createHttpReranker({ url: s.url, model: 'rerank-v3.5', apiKey: 'wrong-key-456', timeoutMs: 2000 });
    const err = await rerankError(wrong.rerank(QUERY, DOCUMENTS));
    expect(err.kind).toBe('refused');
    expect(err.message).toContain('HTTP 401');
    expect(err.message).not.toContain('wrong-key-456');
    // A 401 is not a body refusal: no second try with TEI's body.
    expect(s.requests).toHaveLength(2);
  });

  it('fails a 500 as `unavailable`, without retrying, and a refused body from Cohere as `refused` after both bodies', async () => {
    const s = await start('cohere');
    const reranker = createHttpReranker({ url: s.url, model: 'rerank-v3.5', timeoutMs: 2000 });
    s.failNext(1, 500);
    const err = await rerankError(reranker.rerank(QUERY, DOCUMENTS));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/HTTP 500 from http:\/\/127\.0\.0\.1:\d+\/v2\/rerank: the model is overloaded/);
    expect(s.requests).toHaveLength(1);

    const noModel = createHttpReranker({ url: s.url, timeoutMs: 2000 });
    const refused = await rerankError(noModel.rerank(QUERY, DOCUMENTS));
    expect(refused.kind).toBe('refused');
    expect(refused.message).toContain('model must be specified');
    expect(refused.message).toContain('unknown field');
  });

  it('fails as `timeout` when the server answers too late, and follows the caller\'s signal', async () => {
    const s = await start('jina');
    s.setDelay(1000);
    const reranker = createHttpReranker({ url: s.url, model: 'm', timeoutMs: 100 });
    const started = performance.now();
    const err = await rerankError(reranker.rerank(QUERY, DOCUMENTS));
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/within 100 ms/);
    expect(performance.now() - started).toBeLessThan(900);

    const caller = new AbortController();
    const reason = new Error('search deadline');
    setTimeout(() => caller.abort(reason), 20);
    const slow = createHttpReranker({ url: s.url, model: 'm', timeoutMs: 5000 });
    await expect(slow.rerank(QUERY, DOCUMENTS, caller.signal)).rejects.toBe(reason);
  });

  it('fails an unreachable server as `unavailable` and a malformed answer as `bad_answer`', async () => {
    const s = await start('tei');
    const url = s.url;
    await s.close();
    server = undefined;
    expect((await rerankError(createHttpReranker({ url, timeoutMs: 2000 }).rerank(QUERY, DOCUMENTS))).kind).toBe('unavailable');

    const partial = await start('cohere');
    const reranker = createHttpReranker({ url: partial.url, model: 'm', timeoutMs: 2000 });
    // Cohere cuts to top_n; a server that ignores it the other way (fewer than asked) leaves documents unscored.
    const fetchImpl: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
      return fetch(input, { ...init, body: JSON.stringify({ ...body, top_n: 1 }) });
    };
    const short = createHttpReranker({ url: partial.url, model: 'm', timeoutMs: 2000, fetchImpl });
    const err = await rerankError(short.rerank(QUERY, DOCUMENTS));
    expect(err.kind).toBe('bad_answer');
    expect(err.message).toContain('scored 1 of 3 documents');
    expect(await reranker.rerank(QUERY, [])).toEqual([]);
  });
});
