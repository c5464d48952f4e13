import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEmbedder } from '../../src/adapters/embeddings/openai.embedder.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { DomainError } from '../../src/core/errors.ts';
import { G3_ERRORS } from '../../src/surfaces/g3-search/errors.ts';
import { createTestApp, g1, json, sharedTestApp, uniqueTenant, type TestApp } from '../support/test-app.ts';
import { expectG3Error, fieldsOf, g3 } from './client.ts';
import { repeatsOnThisStore } from '../support/test-depth.ts';

/** A local embeddings server (OpenAI wire format) that answers after `delayMs`, or fails with 500. */
async function startEmbeddingsServer(options: { delayMs: number; fail?: boolean }): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      setTimeout(() => {
        if (options.fail) {
          res.statusCode = 500;
          res.end('{"error":{"message":"model down"}}');
          return;
        }
        const input = (JSON.parse(raw) as { input: string[] }).input;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: input.map((_, index) => ({ index, embedding: [1, 0, 0, 0, 0, 0, 0, 0] })) }));
      }, options.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

const stop = (server: Server) => new Promise<void>((r) => {
  server.closeAllConnections();
  server.close(() => r());
});

describe('G3 errors', () => {
  let t: TestApp;
  let key: string;
  let api: ReturnType<typeof g3>;
  const setup = async (env: Record<string, string> = {}) => {
    t = Object.keys(env).length > 0 ? await createTestApp({ env }) : await fileApp();
    key = await t.key();
    api = g3(t.app, key);
  };
  // Tests that need nothing special share one app (a fresh tenant each); those with their own configuration, clock or
  // embedder build their own, closed after them.
  const fileApp = sharedTestApp();
  afterAll(() => fileApp.close());
  afterEach(async () => { if (!fileApp.owns(t)) await t?.close(); });

  describe('validation (400 VALIDATION_ERROR, every bad field named once)', () => {
    it('names every bad /search field at once', async () => {
      await setup();
      expect(fieldsOf(expectG3Error(await api.search({}), 400, 'VALIDATION_ERROR'))).toEqual(['query']);
      const e = expectG3Error(await api.search({
        query: 5, topK: 1.5, threshold: 2, includeMetadata: 'no', includeEmbedding: 1, includeVector: 'yes', namespace: '../x',
      }), 400, 'VALIDATION_ERROR');
      expect(fieldsOf(e)).toEqual(['includeEmbedding', 'includeMetadata', 'includeVector', 'namespace', 'query', 'threshold', 'topK']);
      expect(e.message).toBe('Request validation failed');
      expect(fieldsOf(expectG3Error(await api.search({ query: '  \n ', topK: 0 }), 400, 'VALIDATION_ERROR'))).toEqual(['query', 'topK']);
      expect(fieldsOf(expectG3Error(await api.search({ query: 'x'.repeat(10_001), topK: 101, threshold: -0.1 }), 400, 'VALIDATION_ERROR')))
        .toEqual(['query', 'threshold', 'topK']);
      expect(fieldsOf(expectG3Error(await api.search({ query: 'q', topK: '5' }), 400, 'VALIDATION_ERROR'))).toEqual(['topK']);
      expect(fieldsOf(expectG3Error(await api.search({ query: 'q', includeVector: true, includeEmbedding: false }), 400, 'VALIDATION_ERROR')))
        .toEqual(['includeVector']);
      expect((await api.search({ query: 'x'.repeat(10_000) })).statusCode).toBe(200);
    });

    it('checks filters: dates, date order, operators, metadata keys and values', async () => {
      await setup();
      const bad = async (filters: unknown, extra: object = {}) =>
        fieldsOf(expectG3Error(await api.search({ query: 'q', filters, ...extra }), 400, 'VALIDATION_ERROR'));
      expect(await bad({ date: { $gte: 'last tuesday' } })).toEqual(['filters.date.$gte']);
      expect(await bad({ date: { $lte: '2026-13-45' } })).toEqual(['filters.date.$lte']);
      expect(await bad({ date: { $gte: '2026-02-01', $lte: '2026-01-01' } })).toEqual(['filters.date.$gte']);
      expect(await bad({ date: { $gt: '2026-01-01' } })).toEqual(['filters.date.$gt']);
      expect(await bad({ date: '2026-01-01' })).toEqual(['filters.date']);
      expect(await bad({ tags: { $any: ['a'] } })).toEqual(['filters.tags.$any']);
      expect(await bad({ tags: 'ops' })).toEqual(['filters.tags']);
      expect(await bad({ tags: [] })).toEqual(['filters.tags']);
      expect(await bad({ tags: { $all: [1] } })).toEqual(['filters.tags.$all']);
      expect(await bad({ tags: {} })).toEqual(['filters.tags']);
      expect(await bad({ type: 7 })).toEqual(['filters.type']);
      expect(await bad({ type: ['ok', ''] })).toEqual(['filters.type']);
      expect(await bad({ $or: [{ env: 'a' }] })).toEqual(['filters.$or']);
      expect(await bad({ env: { $ne: 'prod' } })).toEqual(['filters.env.$ne']);
      expect(await bad({ source: { kind: 'web' } })).toEqual(['filters.source']);
      expect(await bad({ "x' OR 1=1": 'a' })).toEqual(["filters.x' OR 1=1"]);
      expect(await bad({ env: [{ a: 1 }] })).toEqual(['filters.env']);
      expect(await bad([])).toEqual(['filters']);
      expect(await bad(null)).toEqual(['filters']);
      // Several at once, with other fields.
      expect(await bad({ date: { $gte: 'x', $lte: 'y' }, tags: { $nope: [] }, color: { $in: ['red'] } }, { topK: 0 }))
        .toEqual(['filters.color.$in', 'filters.date.$gte', 'filters.date.$lte', 'filters.tags.$nope', 'topK']);
    });

    it('validates /hybrid: weights, rerank, threshold, and both weights 0', async () => {
      await setup();
      expect(fieldsOf(expectG3Error(await api.hybrid({}), 400, 'VALIDATION_ERROR'))).toEqual(['query']);
      expect(fieldsOf(expectG3Error(await api.hybrid({ query: 'q', semanticWeight: 1.5, keywordWeight: -1, rerank: 'yes', threshold: 3 }), 400, 'VALIDATION_ERROR')))
        .toEqual(['keywordWeight', 'rerank', 'semanticWeight', 'threshold']);
      const zero = expectG3Error(await api.hybrid({ query: 'q', semanticWeight: 0, keywordWeight: 0 }), 400, 'VALIDATION_ERROR');
      expect(fieldsOf(zero)).toEqual(['keywordWeight', 'semanticWeight']);
      expect(zero.details[0]!.message).toMatch(/both be 0/);
      expect(fieldsOf(expectG3Error(await api.hybrid({ query: ' ', filters: { date: { $lte: 'soon' } } }), 400, 'VALIDATION_ERROR')))
        .toEqual(['filters.date.$lte', 'query']);
      expect((await api.hybrid({ query: 'q', semanticWeight: 0, keywordWeight: 1 })).statusCode).toBe(200);
    });

    it('refuses a /batch without a usable searches array as a whole', async () => {
      await setup();
      const whole = async (body: unknown) => fieldsOf(expectG3Error(await api.batch(body), 400, 'VALIDATION_ERROR'));
      expect(await whole({})).toEqual(['searches']);
      expect(await whole({ searches: 'deploy' })).toEqual(['searches']);
      expect(await whole({ searches: [] })).toEqual(['searches']);
      expect(await whole({ searches: Array.from({ length: 21 }, () => ({ query: 'q' })) })).toEqual(['searches']);
      expect(await whole({ searches: [{ query: 'q' }], namespace: 'a/b' })).toEqual(['namespace']);
      // A refused batch still names its bad items.
      expect(await whole({ searches: [{ query: '' }], namespace: '' })).toEqual(['namespace', 'searches[0].query']);
      const ok = await api.batch({ searches: Array.from({ length: 20 }, () => ({ query: 'q' })) });
      expect(ok.statusCode).toBe(200);
      expect(json(ok).results).toHaveLength(20);
    });

    it('marks each bad /batch item in its own slot', async () => {
      await setup();
      const res = await api.batch({ searches: [7, { topK: 3 }, { query: 'fine' }, { query: 'q', threshold: 'high', filters: { tags: { $xor: ['a'] } } }] });
      expect(res.statusCode).toBe(200);
      const [notObject, noQuery, fine, twoBad] = json(res).results;
      expect(notObject).toMatchObject({ query: null, matches: [], error: { code: 'VALIDATION_ERROR' } });
      expect(fieldsOf(notObject.error)).toEqual(['searches[0]']);
      expect(noQuery).toMatchObject({ query: null, matches: [] });
      expect(fieldsOf(noQuery.error)).toEqual(['searches[1].query']);
      expect(fine).toEqual({ query: 'fine', matches: [] });
      expect(twoBad.query).toBe('q');
      expect(fieldsOf(twoBad.error)).toEqual(['searches[3].filters.tags.$xor', 'searches[3].threshold']);
      expect(typeof twoBad.error.message).toBe('string');
    });

    it('answers malformed JSON, empty and non-object bodies, and wrong content types in the envelope', async () => {
      await setup();
      const post = (payload: string, contentType?: string, path = '') => t.app.inject({
        method: 'POST', url: `/api/v1/search${path}`, payload,
        headers: { authorization: `Bearer ${key}`, ...(contentType ? { 'content-type': contentType } : {}) },
      });
      for (const path of ['', '/hybrid', '/batch']) {
        expect(fieldsOf(expectG3Error(await post('{"query": "x", ', 'application/json', path), 400, 'VALIDATION_ERROR'))).toEqual(['body']);
        expectG3Error(await post('', 'application/json', path), 400, 'VALIDATION_ERROR');
        expectG3Error(await post('null', 'application/json', path), 400, 'VALIDATION_ERROR');
        expectG3Error(await post('[1,2]', 'application/json', path), 400, 'VALIDATION_ERROR');
        expectG3Error(await post('"query"', 'application/json', path), 400, 'VALIDATION_ERROR');
        const form = expectG3Error(await post('query=x', 'application/x-www-form-urlencoded', path), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expect(fieldsOf(form)).toEqual(['Content-Type']);
        expectG3Error(await post('query', 'text/plain', path), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expectG3Error(await post('{"query":"x"}', undefined, path), 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
    });
  });

  it('answers unknown G3 paths with 404 NOT_FOUND and other methods with 405 in the G3 envelope', async () => {
    await setup();
    const h = { authorization: `Bearer ${key}` };
    expectG3Error(await t.app.inject({ method: 'POST', url: '/api/v1/search/vector', headers: h, payload: {} }), 404, 'NOT_FOUND');
    expectG3Error(await t.app.inject({ method: 'GET', url: '/api/v1/search', headers: h }), 405, 'METHOD_NOT_ALLOWED');
    const hybrid = await t.app.inject({ method: 'GET', url: '/api/v1/search/hybrid?x=1' });
    expectG3Error(hybrid, 405, 'METHOD_NOT_ALLOWED');
    expect(hybrid.headers.allow).toBe('POST');
    expectG3Error(await t.app.inject({ method: 'POST', url: '/api/v1/search/%ZZ', headers: h, payload: {} }), 400, 'VALIDATION_ERROR');
  });

  describe('authentication and authorization', () => {
    it('answers 401 UNAUTHORIZED for a missing, malformed, unknown or revoked key', async () => {
      await setup();
      const body = { query: 'q' };
      expectG3Error(await g3(t.app, undefined).search(body), 401, 'UNAUTHORIZED');
      expectG3Error(await g3(t.app, undefined, { authorization: key }).search(body), 401, 'UNAUTHORIZED');
      expectG3Error(await g3(t.app, undefined, { authorization: `Basic ${key}` }).search(body), 401, 'UNAUTHORIZED');
      expectG3Error(await g3(t.app, 'mnemo_live_nope').hybrid(body), 401, 'UNAUTHORIZED');
      const typo = key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21);
      expectG3Error(await g3(t.app, typo).batch({ searches: [body] }), 401, 'UNAUTHORIZED');

      const goneCo = uniqueTenant('gone-co');
      const revokedKey = await t.key({ tenant: goneCo });
      const [record] = await t.container.apiKeys.list(goneCo);
      expect((await g3(t.app, revokedKey).search(body)).statusCode).toBe(200);
      await t.container.apiKeys.revoke(record!.id);
      for (const call of ['search', 'hybrid', 'batch'] as const) {
        const e = expectG3Error(await g3(t.app, revokedKey)[call](call === 'batch' ? { searches: [body] } : body), 401, 'UNAUTHORIZED');
        expect(e.message).toMatch(/revoked/);
      }
      expect((await api.search(body)).statusCode).toBe(200);
    });

    it('checks the key before the body: an unauthenticated bad request is a 401', async () => {
      await setup();
      expectG3Error(await g3(t.app, undefined).search({ topK: 'lots' }), 401, 'UNAUTHORIZED');
      expectG3Error(await t.app.inject({ method: 'POST', url: '/api/v1/search', payload: '{oops', headers: { 'content-type': 'application/json' } }), 401, 'UNAUTHORIZED');
    });

    it('answers 403 PERMISSION_DENIED to a key without memories:read', async () => {
      await setup();
      const writer = g3(t.app, await t.key({ scopes: ['memories:write'] }));
      expectG3Error(await writer.search({ query: 'q' }), 403, 'PERMISSION_DENIED');
      expectG3Error(await writer.hybrid({ query: 'q' }), 403, 'PERMISSION_DENIED');
      expectG3Error(await writer.batch({ searches: [{ query: 'q' }] }), 403, 'PERMISSION_DENIED');
      expect((await g3(t.app, await t.key({ scopes: ['memories:read'] })).search({ query: 'q' })).statusCode).toBe(200);
    });
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
    await setup({ MNEMO_MAX_CONTENT_BYTES: '1000', MNEMO_BODY_LIMIT_BYTES: '2048' });
    expectG3Error(await api.search({ query: 'x'.repeat(5000) }), 413, 'PAYLOAD_TOO_LARGE');
    expectG3Error(await api.batch({ searches: Array.from({ length: 20 }, () => ({ query: 'y'.repeat(200) })) }), 413, 'PAYLOAD_TOO_LARGE');
  });

  // The loop of 60 requests: on PostgreSQL in `npm run test:long` only (test/support/test-depth.ts, repeatsOnThisStore).
  it.runIf(repeatsOnThisStore())('answers 429 RATE_LIMITED with Retry-After when the gateway limit is reached', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    t = await createTestApp({ overrides: { clock } });
    const free = g3(t.app, await t.key({ tier: 'free' }));
    for (let i = 0; i < 60; i++) expect((await free.search({ query: 'q' })).statusCode).toBe(200);
    const limited = await free.hybrid({ query: 'q' });
    expectG3Error(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBe(60);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    clock.advance(60_000);
    expect((await free.search({ query: 'q' })).statusCode).toBe(200);
  });

  it('maps every domain error code to a G3 status and code', () => {
    const cases: [DomainError['code'], number, string][] = [
      ['VALIDATION_FAILED', 400, 'VALIDATION_ERROR'], ['UNAUTHENTICATED', 401, 'UNAUTHORIZED'],
      ['PERMISSION_DENIED', 403, 'PERMISSION_DENIED'], ['NOT_FOUND', 404, 'NOT_FOUND'],
      ['TIMEOUT', 408, 'SEARCH_TIMEOUT'], ['CONTENT_TOO_LARGE', 413, 'PAYLOAD_TOO_LARGE'],
      ['RATE_LIMITED', 429, 'RATE_LIMITED'], ['QUOTA_EXCEEDED', 429, 'RATE_LIMITED'],
      ['EMBEDDING_FAILED', 503, 'SERVICE_UNAVAILABLE'], ['CONFLICT', 409, 'CONFLICT'],
    ];
    for (const [domain, status, code] of cases) {
      expect(G3_ERRORS[domain], domain).toMatchObject({ status, code });
    }
  });

  describe('slow and failing embeddings', () => {
    let slow: { server: Server; url: string };
    let failing: { server: Server; url: string };
    beforeAll(async () => {
      slow = await startEmbeddingsServer({ delayMs: 500 });
      failing = await startEmbeddingsServer({ delayMs: 0, fail: true });
    });
    afterAll(async () => {
      await stop(slow.server);
      await stop(failing.server);
    });

    it('answers 408 SEARCH_TIMEOUT when a search outlives MNEMO_SEARCH_TIMEOUT_MS', async () => {
      const embedder = createOpenAiEmbedder({ url: slow.url, model: 'slow', dimensions: 8, maxRetries: 0 });
      t = await createTestApp({ env: { MNEMO_SEARCH_TIMEOUT_MS: '50' }, overrides: { embedder } });
      api = g3(t.app, await t.key());
      const started = performance.now();
      const e = expectG3Error(await api.search({ query: 'q' }), 408, 'SEARCH_TIMEOUT');
      expect(performance.now() - started).toBeLessThan(450);
      expect(e.message).toMatch(/50 ms/);
      expectG3Error(await api.hybrid({ query: 'q' }), 408, 'SEARCH_TIMEOUT');
      expectG3Error(await api.batch({ searches: [{ query: 'a' }, { query: 'b' }] }), 408, 'SEARCH_TIMEOUT');
    });

    it('the same slow model answers when the deadline allows it', async () => {
      const embedder = createOpenAiEmbedder({ url: slow.url, model: 'slow', dimensions: 8, maxRetries: 0 });
      t = await createTestApp({ env: { MNEMO_SEARCH_TIMEOUT_MS: '5000' }, overrides: { embedder } });
      const res = await g3(t.app, await t.key()).search({ query: 'q' });
      expect(res.statusCode).toBe(200);
      expect(json(res).query_embedding_time).toBeGreaterThanOrEqual(400);
    });

    it('answers 503 SERVICE_UNAVAILABLE when the embeddings provider fails', async () => {
      const embedder = createOpenAiEmbedder({ url: failing.url, model: 'm', dimensions: 8, maxRetries: 0 });
      t = await createTestApp({ overrides: { embedder } });
      api = g3(t.app, await t.key());
      const e = expectG3Error(await api.search({ query: 'q' }), 503, 'SERVICE_UNAVAILABLE');
      expect(e.message).not.toContain('127.0.0.1');
      expectG3Error(await api.hybrid({ query: 'q' }), 503, 'SERVICE_UNAVAILABLE');
      expectG3Error(await api.batch({ searches: [{ query: 'q' }] }), 503, 'SERVICE_UNAVAILABLE');
    });
  });

  it('keeps G1 answering in its own envelope (the G3 handler only covers /api/v1/search)', async () => {
    await setup();
    const res = await g1(t.app, key).create({});
    expect(res.statusCode).toBe(400);
    expect(json(res).success).toBe(false);
  });
});
