import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createOpenAiEmbedder } from '../../src/adapters/embeddings/openai.embedder.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, sharedTestApp, type Json, type TestApp } from '../support/test-app.ts';
import { repeatsOnThisStore, requestsOverHttp } from '../support/test-depth.ts';
import { expectG4Error, fields, g4, ok, type G4Client } from './client.ts';

const zeros = (n: number) => new Array<number>(n).fill(0);
/** A valid 1536 vector: mostly zeros, one 1. */
const unit = () => { const v = zeros(1536); v[0] = 1; return v; };

describe('G4 errors', () => {
  let t: TestApp;
  let api: G4Client;
  let key: string;
  // Tests that need nothing special share one app (a fresh tenant each); those with their own configuration, clock or
  // embedder build their own, closed after them.
  const fileApp = sharedTestApp();
  afterAll(() => fileApp.close());
  afterEach(async () => { if (!fileApp.owns(t)) await t?.close(); });

  const setup = async (env: Record<string, string> = {}) => {
    t = Object.keys(env).length > 0 ? await createTestApp({ env }) : await fileApp();
    key = await t.key();
    api = g4(t.app, key);
  };

  describe('query and threshold', () => {
    it('answers INVALID_QUERY for a missing, blank or overlong q', async () => {
      await setup();
      expect(fields(expectG4Error(await api.search({}), 400, 'INVALID_QUERY'))).toEqual(['q']);
      expect(fields(expectG4Error(await api.search({ q: '' }), 400, 'INVALID_QUERY'))).toEqual(['q']);
      expect(fields(expectG4Error(await api.search({ q: '   ' }), 400, 'INVALID_QUERY'))).toEqual(['q']);
      expect(fields(expectG4Error(await api.search({ q: 'x'.repeat(10_001) }), 400, 'INVALID_QUERY'))).toEqual(['q']);
      expect((await api.search({ q: 'x'.repeat(10_000) })).statusCode).toBe(200);
      expect(fields(expectG4Error(await api.suggestions({}), 400, 'INVALID_QUERY'))).toEqual(['q']);
      expect(fields(expectG4Error(await api.suggestions({ q: ' ' }), 400, 'INVALID_QUERY'))).toEqual(['q']);
      expect(fields(expectG4Error(await api.embed({}), 400, 'INVALID_QUERY'))).toEqual(['text']);
      expect(fields(expectG4Error(await api.embed({ text: ' \n' }), 400, 'INVALID_QUERY'))).toEqual(['text']);
      expect(fields(expectG4Error(await api.embed({ text: 7 }), 400, 'INVALID_QUERY'))).toEqual(['text']);
      expect(fields(expectG4Error(await api.embed({ text: 'x'.repeat(10_001) }), 400, 'INVALID_QUERY'))).toEqual(['text']);
    });

    it('answers SIMILARITY_THRESHOLD_INVALID outside 0.0-1.0 or not a number', async () => {
      await setup();
      for (const similarity_threshold of ['1.5', '-0.1', 'abc', 'NaN', 'Infinity', '']) {
        const e = expectG4Error(await api.search({ q: 'x', similarity_threshold }), 400, 'SIMILARITY_THRESHOLD_INVALID');
        expect(fields(e), similarity_threshold).toEqual(['similarity_threshold']);
      }
      for (const similarity_threshold of [1.5, -0.1, '0.5', null]) {
        const e = expectG4Error(await api.vector({ vector: unit(), similarity_threshold }), 400, 'SIMILARITY_THRESHOLD_INVALID');
        expect(fields(e)).toEqual(['similarity_threshold']);
      }
      expect((await api.search({ q: 'x', similarity_threshold: 0 })).statusCode).toBe(200);
      expect((await api.search({ q: 'x', similarity_threshold: 1 })).statusCode).toBe(200);
      expect((await api.vector({ vector: unit(), similarity_threshold: 0 })).statusCode).toBe(200);
    });

    it('picks the code by priority and lists every problem', async () => {
      await setup();
      const e = expectG4Error(await api.search({ similarity_threshold: 2, limit: 0, created_after: 'yesterday' }), 400, 'INVALID_QUERY');
      expect(fields(e)).toEqual(['created_after', 'limit', 'q', 'similarity_threshold']);
      expect(e.details[0]!.field).toBe('q');
      const th = expectG4Error(await api.search({ q: 'x', similarity_threshold: 2, limit: 51 }), 400, 'SIMILARITY_THRESHOLD_INVALID');
      expect(fields(th)).toEqual(['limit', 'similarity_threshold']);
      const v = expectG4Error(await api.vector({ vector: [1, 2], similarity_threshold: 5, limit: 0, tags: 'ops' }), 400, 'INVALID_VECTOR');
      expect(fields(v)).toEqual(['limit', 'similarity_threshold', 'tags', 'vector']);
      const body = expectG4Error(await api.search({ q: ' ', tags: 'a' }, 'not an object'), 400, 'INVALID_QUERY');
      expect(fields(body)).toEqual(['body', 'q']);
    });
  });

  describe('vectors', () => {
    it('answers INVALID_VECTOR for a wrong length, a non-number, a non-finite number, all zeros or no vector', async () => {
      await setup();
      const short = expectG4Error(await api.vector({ vector: zeros(1535).map((_, i) => i + 1) }), 400, 'INVALID_VECTOR');
      expect(short.details).toEqual([{ field: 'vector', message: 'must have exactly 1536 numbers (got 1535)' }]);
      expectG4Error(await api.vector({ vector: [...unit(), 1] }), 400, 'INVALID_VECTOR');
      expectG4Error(await api.vector({ vector: [] }), 400, 'INVALID_VECTOR');

      const withString = unit();
      (withString as unknown[])[7] = '0.5';
      expect(fields(expectG4Error(await api.vector({ vector: withString }), 400, 'INVALID_VECTOR'))).toEqual(['vector[7]']);
      const withNull = unit();
      (withNull as unknown[])[3] = null;
      expect(fields(expectG4Error(await api.vector({ vector: withNull }), 400, 'INVALID_VECTOR'))).toEqual(['vector[3]']);
      const withNaN = unit();
      (withNaN as unknown[])[9] = 'NaN';
      expect(fields(expectG4Error(await api.vector({ vector: withNaN }), 400, 'INVALID_VECTOR'))).toEqual(['vector[9]']);
      // 1e999 is valid JSON that parses to Infinity.
      const raw = `{"vector":[${[...zeros(1535).map(() => '0.1'), '1e999'].join(',')}]}`;
      const inf = await t.app.inject({ method: 'POST', url: '/v1/search/vector', headers: { ...api.headers, 'content-type': 'application/json' }, payload: raw });
      expect(expectG4Error(inf, 400, 'INVALID_VECTOR').details).toEqual([{ field: 'vector[1535]', message: 'must be a finite number' }]);
      const nested = unit();
      (nested as unknown[])[0] = [1];
      expectG4Error(await api.vector({ vector: nested }), 400, 'INVALID_VECTOR');

      expect(fields(expectG4Error(await api.vector({}), 400, 'INVALID_VECTOR'))).toEqual(['vector']);
      expect(fields(expectG4Error(await api.vector({ vector: 'not a vector' }), 400, 'INVALID_VECTOR'))).toEqual(['vector']);
      expect(fields(expectG4Error(await api.vector({ vector: { 0: 1 } }), 400, 'INVALID_VECTOR'))).toEqual(['vector']);
      const allZero = expectG4Error(await api.vector({ vector: zeros(1536) }), 400, 'INVALID_VECTOR');
      expect(allZero.details[0]!.message).toMatch(/zeros/);
    });

    it('refuses a number beyond the 32-bit float range, as G2 does for embeddings (one check for both)', async () => {
      await setup();
      // 1e39 is a finite double but Infinity once stored as a 32-bit float: a search by it found nothing, silently.
      const v = unit();
      v[1] = 1e39;
      const e = expectG4Error(await api.vector({ vector: v }), 400, 'INVALID_VECTOR');
      expect(e.details).toEqual([{ field: 'vector[1]', message: expect.stringMatching(/32-bit float range/) }]);
      v[1] = 3.4e38;
      expect((await api.vector({ vector: v })).statusCode).toBe(200);
    });

    it('names the first bad entries and sums up the rest', async () => {
      await setup();
      const e = expectG4Error(await api.vector({ vector: zeros(1536).map(() => 'x') }), 400, 'INVALID_VECTOR');
      expect(e.details).toHaveLength(11);
      expect(e.details[0]).toEqual({ field: 'vector[0]', message: 'must be number' });
      expect(e.details[10]).toEqual({ field: 'vector', message: '1526 more entries are not finite numbers either' });
    });
  });

  describe('other fields: VALIDATION_ERROR', () => {
    it('validates limits, offsets, dates, tags and types', async () => {
      await setup();
      for (const q of [{ limit: 0 }, { limit: 51 }, { limit: 'ten' }, { offset: -1 }, { offset: 1001 }, { offset: 1.5 },
        { include_content: 'maybe' }, { highlight: 'sometimes' }]) {
        const [field] = Object.keys(q);
        expect(fields(expectG4Error(await api.search({ q: 'x', ...q }), 400, 'VALIDATION_ERROR')), field).toEqual([field]);
      }
      expect(fields(expectG4Error(await api.search({ q: 'x', created_after: '2026-13-01' }), 400, 'VALIDATION_ERROR'))).toEqual(['created_after']);
      expect(fields(expectG4Error(await api.search({ q: 'x', created_before: 'last week' }), 400, 'VALIDATION_ERROR'))).toEqual(['created_before']);
      const order = expectG4Error(await api.search({ q: 'x', created_after: '2026-02-01', created_before: '2026-01-01' }), 400, 'VALIDATION_ERROR');
      expect(order.details).toEqual([{ field: 'created_after', message: 'must not be after created_before' }]);
      const manyTags = Array.from({ length: 101 }, (_, i) => `t${i}`);
      expectG4Error(await api.search({ q: 'x', tags: manyTags.join(',') }), 400, 'VALIDATION_ERROR');
      expectG4Error(await api.vector({ vector: unit(), tags: manyTags }), 400, 'VALIDATION_ERROR');
      expect(fields(expectG4Error(await api.vector({ vector: unit(), tags: [''] }), 400, 'VALIDATION_ERROR'))).toEqual(['tags[0]']);
      expect(fields(expectG4Error(await api.vector({ vector: unit(), offset: -1, limit: 100 }), 400, 'VALIDATION_ERROR'))).toEqual(['limit', 'offset']);

      for (const q of [{ limit: 0 }, { limit: 21 }, { type: 'memory' }]) {
        const [field] = Object.keys(q);
        expect(fields(expectG4Error(await api.suggestions({ q: 'x', ...q }), 400, 'VALIDATION_ERROR')), field).toEqual([field]);
      }
      const type = expectG4Error(await api.suggestions({ q: 'x', type: 'memory' }), 400, 'VALIDATION_ERROR');
      expect(type.details[0]!.message).toBe('must be one of: query, tag, title');
    });

    it('validates metadata filters from the query string, the GET body and the vector body', async () => {
      await setup();
      const bad = async (res: Awaited<ReturnType<G4Client['search']>>, expected: string[]) =>
        expect(fields(expectG4Error(res, 400, 'VALIDATION_ERROR'))).toEqual(expected);
      await bad(await api.search({ q: 'x', metadata_filter: '{env: prod}' }), ['metadata_filter']);
      await bad(await api.search({ q: 'x', metadata_filter: '["prod"]' }), ['metadata_filter']);
      await bad(await api.search({ q: 'x', metadata_filter: '{"env":{"nested":1}}' }), ['metadata_filter.env']);
      await bad(await api.search({ q: 'x' }, { metadata_filter: 'prod' }), ['metadata_filter']);
      await bad(await api.search({ q: 'x' }, { metadata_filter: { 'bad key!': 'x' } }), ['metadata_filter.bad key!']);
      await bad(await api.search({ q: 'x' }, { metadata_filter: { env: [{ a: 1 }] } }), ['metadata_filter.env']);
      await bad(await api.search({ q: 'x' }, { metadataFilter: { env: 'prod' } }), ['body.metadataFilter']);
      await bad(await api.search({ q: 'x' }, [1, 2]), ['body']);
      await bad(await api.search({ q: 'x', metadata_filter: '{"env":"a"}' }, { metadata_filter: { env: 'b' } }), ['metadata_filter']);
      const malformed = await t.app.inject({
        method: 'GET', url: '/v1/search?q=x', headers: { ...api.headers, 'content-type': 'application/json' }, payload: '{"metadata_filter": ',
      });
      expect(expectG4Error(malformed, 400, 'VALIDATION_ERROR').details).toEqual([{ field: 'body', message: 'is not valid JSON' }]);
      await bad(await api.vector({ vector: unit(), metadata_filter: ['env'] }), ['metadata_filter']);
      await bad(await api.vector({ vector: unit(), metadata_filter: { env: { deep: true } } }), ['metadata_filter.env']);
    });

    it('answers an unknown model with the list of models', async () => {
      await setup();
      const e = expectG4Error(await api.embed({ text: 'x', model: 'text-embedding-ada-002' }), 400, 'VALIDATION_ERROR');
      expect(e.details).toEqual([{ field: 'model', message: 'must be one of: mnemo-embed-1024, mnemo-embed-1536, mnemo-embed-768' }]);
      expect(e.message).toContain('mnemo-embed-1536');
      expect(fields(expectG4Error(await api.embed({ text: 'x', model: 1536 }), 400, 'VALIDATION_ERROR'))).toEqual(['model']);
      // A bad text outranks it, and both are listed.
      expect(fields(expectG4Error(await api.embed({ text: '', model: 'nope' }), 400, 'INVALID_QUERY'))).toEqual(['model', 'text']);
    });

    it('validates X-Workspace-ID with the other problems', async () => {
      await setup();
      const other = g4(t.app, key, { 'x-workspace-id': '../etc' });
      expect(fields(expectG4Error(await other.search({ q: 'x', limit: 0 }), 400, 'VALIDATION_ERROR'))).toEqual(['X-Workspace-ID', 'limit']);
      expect(fields(expectG4Error(await other.vector({ vector: unit() }), 400, 'VALIDATION_ERROR'))).toEqual(['X-Workspace-ID']);
      expect(fields(expectG4Error(await other.suggestions({ q: 'x' }), 400, 'VALIDATION_ERROR'))).toEqual(['X-Workspace-ID']);
    });
  });

  describe('bodies, media types and paths', () => {
    it('answers malformed JSON, wrong content types and oversized bodies in the envelope', async () => {
      await setup({ MNEMO_MAX_CONTENT_BYTES: '1000', MNEMO_BODY_LIMIT_BYTES: '40000' });
      const post = (url: string, payload: string, contentType?: string) => t.app.inject({
        method: 'POST', url, payload, headers: { ...api.headers, ...(contentType ? { 'content-type': contentType } : {}) },
      });
      for (const url of ['/v1/search/vector', '/v1/embeddings']) {
        expect(fields(expectG4Error(await post(url, '{"vector": [', 'application/json'), 400, 'VALIDATION_ERROR'))).toEqual(['body']);
        expectG4Error(await post(url, '', 'application/json'), 400, 'VALIDATION_ERROR');
        expectG4Error(await post(url, 'null', 'application/json'), 400, 'VALIDATION_ERROR');
        expectG4Error(await post(url, '[1,2]', 'application/json'), 400, 'VALIDATION_ERROR');
        expectG4Error(await post(url, 'text=hi', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expectG4Error(await post(url, 'hi', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expectG4Error(await post(url, '{"text":"hi"}'), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expectG4Error(await post(url, JSON.stringify({ text: 'x'.repeat(50_000) }), 'application/json'), 413, 'PAYLOAD_TOO_LARGE');
      }
      expectG4Error(await t.app.inject({ method: 'POST', url: '/v1/embeddings', headers: api.headers }), 400, 'VALIDATION_ERROR');

      const get = (payload: string, contentType: string) => t.app.inject({
        method: 'GET', url: '/v1/search?q=x', payload, headers: { ...api.headers, 'content-type': contentType },
      });
      expectG4Error(await get('metadata_filter=x', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectG4Error(await get('{"metadata_filter": {}}', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      const huge = JSON.stringify({ metadata_filter: { env: 'x'.repeat(70_000) } });
      expectG4Error(await get(huge, 'application/json'), 413, 'PAYLOAD_TOO_LARGE');
      // A content type with no body is fine, and so is a JSON body with a charset.
      expect((await t.app.inject({ method: 'GET', url: '/v1/search?q=x', headers: { ...api.headers, 'content-type': 'text/plain' } })).statusCode).toBe(200);
      expect((await get('{"metadata_filter": {"env": "x"}}', 'application/json; charset=utf-8')).statusCode).toBe(200);
    });

    it('answers unknown paths with NOT_FOUND and other methods with METHOD_NOT_ALLOWED in the envelope', async () => {
      await setup();
      for (const [method, url] of [['GET', '/v1/search/streams'], ['GET', '/v1/search/analytics'], ['GET', '/v1/embeddings/models']] as const) {
        expectG4Error(await t.app.inject({ method, url, headers: api.headers }), 404, 'NOT_FOUND');
      }
      for (const [method, url, allow] of [['POST', '/v1/search', 'GET, HEAD'], ['GET', '/v1/search/vector', 'POST'], ['DELETE', '/v1/embeddings', 'POST']] as const) {
        const res = await t.app.inject({ method, url, headers: api.headers });
        expectG4Error(res, 405, 'METHOD_NOT_ALLOWED');
        expect(res.headers.allow).toBe(allow);
      }
      expectG4Error(await t.app.inject({ method: 'GET', url: '/v1/search/%ZZ', headers: api.headers }), 400, 'VALIDATION_ERROR');
    });
  });

  describe('authentication and scopes', () => {
    it('answers 401 UNAUTHORIZED for a missing, malformed, unknown or revoked key', async () => {
      await setup();
      const calls = (c: G4Client) => [c.search({ q: 'x' }), c.vector({ vector: unit() }), c.suggestions({ q: 'x' }), c.embed({ text: 'x' })];
      const { key: revoked, record } = await t.container.apiKeys.create({ tenantId: 'x', userId: 'u', tier: 'free', mode: 'live' });
      await t.container.apiKeys.revoke(record.id);
      const typo = key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21);
      const clients = [
        g4(t.app, undefined), g4(t.app, 'mnemo_live_'), g4(t.app, typo), g4(t.app, revoked),
        g4(t.app, undefined, { authorization: key }),
        g4(t.app, undefined, { authorization: `Basic ${key}` }),
      ];
      for (const c of clients) {
        for (const res of await Promise.all(calls(c))) {
          expectG4Error(res, 401, 'UNAUTHORIZED');
          expect(res.headers['www-authenticate']).toBe('Bearer realm="mnemo"');
        }
      }
      for (const res of await Promise.all(calls(api))) expect(res.statusCode).toBe(200);
    });

    it('checks the key before anything else: an unauthenticated bad request is a 401', async () => {
      await setup();
      const anon = g4(t.app, undefined);
      expectG4Error(await anon.search({ similarity_threshold: 7 }, 'garbage'), 401, 'UNAUTHORIZED');
      expectG4Error(await anon.vector({ vector: 'x' }), 401, 'UNAUTHORIZED');
      expectG4Error(await anon.embed({}), 401, 'UNAUTHORIZED');
    });

    it('needs memories:read for search endpoints (403 PERMISSION_DENIED)', async () => {
      await setup();
      const writer = g4(t.app, await t.key({ scopes: ['memories:write'] }));
      expectG4Error(await writer.search({ q: 'x' }), 403, 'PERMISSION_DENIED');
      expectG4Error(await writer.vector({ vector: unit() }), 403, 'PERMISSION_DENIED');
      expectG4Error(await writer.suggestions({ q: 'x' }), 403, 'PERMISSION_DENIED');
      expect((await writer.embed({ text: 'x' })).statusCode).toBe(200);
      const reader = g4(t.app, await t.key({ scopes: ['memories:read'] }));
      expect((await reader.search({ q: 'x' })).statusCode).toBe(200);
    });
  });

  describe('rate limits', () => {
    // The loops (60 and 1000 requests): on PostgreSQL in `npm run test:long` only (test/support/test-depth.ts,
    // repeatsOnThisStore).
    it.runIf(repeatsOnThisStore())('answers the gateway limit (60 a minute for free keys) with RATE_LIMIT_EXCEEDED and Retry-After', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      t = await createTestApp({ overrides: { clock } });
      const free = g4(t.app, await t.key({ tier: 'free' }));
      for (let i = 0; i < 60; i++) {
        const res = i % 2 ? await free.search({ q: `q${i}` }) : await free.embed({ text: `t${i}` });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBe('60');
      }
      const limited = await free.search({ q: 'one more' });
      expectG4Error(limited, 429, 'RATE_LIMIT_EXCEEDED');
      expect(Number(limited.headers['retry-after'])).toBe(60);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expectG4Error(await free.embed({ text: 'x' }), 429, 'RATE_LIMIT_EXCEEDED');
      clock.advance(60_000);
      expect((await free.search({ q: 'next minute' })).statusCode).toBe(200);
    });

    it.runIf(repeatsOnThisStore())('limits embeddings to 1000 an hour for free keys; searches and refused requests are not counted', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      t = await createTestApp({ overrides: { clock } });
      const key = await t.key({ tier: 'free' });
      const free = g4(t.app, key);
      const embed = async (body: Json, status: number) => {
        clock.advance(1_500); // 40 a minute: under the gateway's 60
        const res = await free.embed(body);
        if (res.statusCode !== status) expect.fail(`expected ${status}: ${res.body}`);
        return res;
      };
      // In `npm test` the first 989 go straight to the quota the route counts against, on the same clock
      // (test/support/test-depth.ts, requestsOverHttp).
      const principal = await t.container.apiKeys.authenticate(key);
      const overHttp = requestsOverHttp(999);
      for (let i = 0; i < 999 - overHttp; i++) {
        clock.advance(1_500);
        await t.container.limits.embeddings(principal);
      }
      for (let i = 0; i < overHttp; i++) await embed({ text: 'x' }, 200);
      for (const bad of [{ text: '' }, { text: 'x', model: 'nope' }, {}]) await embed(bad, 400);
      clock.advance(1_500);
      expect((await free.search({ q: 'searching does not count' })).statusCode).toBe(200);
      await embed({ text: 'the thousandth' }, 200);
      const over = await embed({ text: 'x' }, 429);
      expect(expectG4Error(over, 429, 'RATE_LIMIT_EXCEEDED').message).toMatch(/1000 per hour/);
      // The hour window ends at 13:00.
      expect(Number(over.headers['retry-after'])).toBe(Math.ceil((Date.UTC(2026, 0, 1, 13) - clock.now().getTime()) / 1000));
      expect(clock.now().getTime()).toBeLessThan(Date.UTC(2026, 0, 1, 12, 30));
      expect(over.headers['x-ratelimit-limit']).toBe('1000');
      clock.advance(35 * 60_000);
      await embed({ text: 'next hour' }, 200);
    });
  });

  describe('slow and failing embedding providers', () => {
    let server: Server | undefined;
    afterEach(async () => {
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      server = undefined;
    });

    /** A real HTTP server speaking the OpenAI embeddings wire format. */
    const provider = async (handle: (body: Json, res: ServerResponse) => void): Promise<string> => {
      server = createServer((req, res) => {
        let text = '';
        req.on('data', (c: Buffer) => (text += c.toString()));
        req.on('end', () => handle(JSON.parse(text) as Json, res));
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    };
    const answer = (body: Json, res: ServerResponse) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: (body.input as string[]).map((_, index) => ({ index, embedding: [1, 0, 0, 0, 0, 0, 0, 0] })) }));
    };

    it('answers 408 SEARCH_TIMEOUT when a search outlives MNEMO_SEARCH_TIMEOUT_MS', async () => {
      let slowAnswerSent!: () => void;
      const slowAnswer = new Promise<void>((resolve) => { slowAnswerSent = resolve; });
      let release!: () => void;
      const released = new Promise<void>((resolve) => { release = resolve; });
      // The provider answers only once the test has its 408 (and at the latest after 1.5 s, as it did before: the
      // search must have given up by then); the limit leaves a vector search (PGlite in process on a loaded machine
      // included) room to answer in time.
      const url = await provider((body, res) => {
        const late = setTimeout(release, 1_500);
        void released.then(() => { clearTimeout(late); answer(body, res); slowAnswerSent(); });
      });
      const embedder = createOpenAiEmbedder({ url, model: 'slow', dimensions: 8, maxRetries: 0 });
      t = await createTestApp({ env: { MNEMO_SEARCH_TIMEOUT_MS: '300' }, overrides: { embedder } });
      api = g4(t.app, await t.key());
      const started = Date.now();
      const e = expectG4Error(await api.search({ q: 'anything' }), 408, 'SEARCH_TIMEOUT');
      expect(e.message).toMatch(/300 ms/);
      expect(Date.now() - started).toBeLessThan(1_400);
      // Vector search does not embed and answers in time.
      const v = zeros(1536);
      v[0] = 1;
      expect((await api.vector({ vector: v })).statusCode).toBe(200);
      // Let the slow answer go out before the app closes.
      release();
      await slowAnswer;

    });

    it('answers 503 SERVICE_UNAVAILABLE when the provider fails', async () => {
      const url = await provider((_body, res) => { res.statusCode = 500; res.end('{"error":{"message":"model down"}}'); });
      const embedder = createOpenAiEmbedder({ url, model: 'down', dimensions: 8, maxRetries: 0 });
      t = await createTestApp({ overrides: { embedder } });
      api = g4(t.app, await t.key());
      expectG4Error(await api.search({ q: 'anything' }), 503, 'SERVICE_UNAVAILABLE');
      expectG4Error(await api.embed({ text: 'anything' }), 503, 'SERVICE_UNAVAILABLE');
      expect((await api.suggestions({ q: 'any' })).statusCode).toBe(200);
      expect(ok(await api.suggestions({ q: 'any' })).suggestions).toEqual([]);
    });
  });
});
