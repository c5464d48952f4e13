import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { makeMemory } from '../support/fixtures.ts';
import { createTestApp, g1, json, sharedTestApp, uniqueTenant, type TestApp } from '../support/test-app.ts';
import { repeatsOnThisStore } from '../support/test-depth.ts';

/** Asserts the G1 error envelope, its status and code; returns the error object. */
function expectG1Error(res: { statusCode: number; json: () => unknown }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  const body = res.json() as { success: boolean; error: { code: string; message: string; details: unknown[]; request_id: string; timestamp: string } };
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(Array.isArray(body.error.details)).toBe(true);
  expect(body.error.request_id).toMatch(/\S/);
  expect(body.error.timestamp).toMatch(/Z$/);
  return body.error as { code: string; details: { field: string; message: string }[] };
}

const fields = (e: { details: { field: string }[] }) => e.details.map((d) => d.field).sort();

describe('G1 errors', () => {
  let t: TestApp;
  let api: ReturnType<typeof g1>;
  let key: string;
  // Tests without special configuration share one app (a fresh tenant each); the others build and close their own.
  const fileApp = sharedTestApp();
  afterEach(async () => { if (!fileApp.owns(t)) await t?.close(); });
  afterAll(() => fileApp.close());

  describe('validation', () => {
    /** A test with its own configuration (env) needs its own app. */
    const setup = async (env: Record<string, string> = {}) => {
      t = Object.keys(env).length > 0 ? await createTestApp({ env }) : await fileApp();
      key = await t.key();
      api = g1(t.app, key);
    };

    it('names every missing or mistyped field on create', async () => {
      await setup();
      expect(fields(expectG1Error(await api.create({}), 400, 'VALIDATION_ERROR'))).toEqual(['content', 'title']);
      const e = expectG1Error(await api.create({ title: 7, content: 'x', tags: 'a', metadata: [], topic_id: 5 }), 400, 'VALIDATION_ERROR');
      expect(fields(e)).toEqual(expect.arrayContaining(['title', 'tags', 'metadata', 'topic_id']));
      expect(fields(expectG1Error(await api.create({ title: 'x'.repeat(256), content: 'x' }), 400, 'VALIDATION_ERROR'))).toEqual(['title']);
      expect(fields(expectG1Error(await api.create({ title: ' ', content: ' \n' }), 400, 'VALIDATION_ERROR'))).toEqual(['content', 'title']);
      expect(fields(expectG1Error(await api.create({ title: 't', content: 'c', memory_type: 'Meeting Notes' }), 400, 'VALIDATION_ERROR'))).toEqual(['memory_type']);
      expect(fields(expectG1Error(await api.create({ title: 't', content: 'c', memory_type: 'project', type: 'workflow' }), 400, 'VALIDATION_ERROR'))).toEqual(['type']);
      expect(fields(expectG1Error(await api.create({ title: 't', content: 'c', topic_id: 'not-a-uuid' }), 400, 'VALIDATION_ERROR'))).toEqual(['topic_id']);
      expect(fields(expectG1Error(await api.create({ title: 't', content: 'c', tags: ['ok', ''] }), 400, 'VALIDATION_ERROR'))).toEqual(['tags[1]']);
      expect(json(await api.list()).pagination.total).toBe(0);
    });

    it('rejects bad updates and leaves the memory as it was', async () => {
      await setup();
      const { id } = json(await api.create({ title: 't', content: 'c' })).data;
      expectG1Error(await api.update(id, {}), 400, 'VALIDATION_ERROR');
      expect(fields(expectG1Error(await api.update(id, { title: '', tags: [1] }), 400, 'VALIDATION_ERROR'))).toEqual(['tags[0]', 'title']);
      expect(json(await api.get(id)).data).toMatchObject({ title: 't', content: 'c', tags: [] });
    });

    it('answers 413 for content over the limit and writes nothing', async () => {
      await setup({ MNEMO_MAX_CONTENT_BYTES: '1000' });
      const e = expectG1Error(await api.create({ title: 't', content: 'é'.repeat(501) }), 413, 'CONTENT_TOO_LARGE');
      expect(fields(e)).toEqual(['content']);
      expect(json(await api.list()).pagination.total).toBe(0);
      const { id } = json(await api.create({ title: 't', content: 'x'.repeat(1000) })).data;
      expectG1Error(await api.update(id, { content: 'x'.repeat(1001) }), 413, 'CONTENT_TOO_LARGE');
      expect(json(await api.get(id)).data.content).toHaveLength(1000);
    });

    it('answers 413 in the envelope for a body over the request limit', async () => {
      await setup({ MNEMO_MAX_CONTENT_BYTES: '1000', MNEMO_BODY_LIMIT_BYTES: '2048' });
      expectG1Error(await api.create({ title: 't', content: 'x'.repeat(5000) }), 413, 'CONTENT_TOO_LARGE');
    });

    it('answers malformed JSON, wrong or missing content types and empty bodies in the envelope', async () => {
      await setup();
      const post = (payload: string, contentType?: string) => t.app.inject({
        method: 'POST', url: '/api/v1/memories', payload,
        headers: { 'x-api-key': key, ...(contentType ? { 'content-type': contentType } : {}) },
      });
      expectG1Error(await post('{"title": "x", ', 'application/json'), 400, 'VALIDATION_ERROR');
      expectG1Error(await post('null', 'application/json'), 400, 'VALIDATION_ERROR');
      expectG1Error(await post('[1,2]', 'application/json'), 400, 'VALIDATION_ERROR');
      expectG1Error(await post('', 'application/json'), 400, 'VALIDATION_ERROR');
      expectG1Error(await post('title=x', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectG1Error(await post('hello', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectG1Error(await post('{"title":"t","content":"c"}'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(json(await api.list()).pagination.total).toBe(0);
    });

    it('answers bad URLs, overlong ids, unknown G1 paths and other methods in the G1 envelope', async () => {
      await setup();
      const h = { 'x-api-key': key };
      expectG1Error(await t.app.inject({ method: 'GET', url: '/api/v1/memories/%ZZ', headers: h }), 400, 'VALIDATION_ERROR');
      expectG1Error(await t.app.inject({ method: 'GET', url: `/api/v1/memories/${'a'.repeat(5000)}`, headers: h }), 400, 'VALIDATION_ERROR');
      expectG1Error(await t.app.inject({ method: 'GET', url: '/api/v1/memories/abc/def', headers: h }), 404, 'NOT_FOUND');
      // A memory's path with a method it does not answer: 405 with the methods it does.
      for (const method of ['POST', 'PATCH'] as const) {
        const res = await t.app.inject({ method, url: '/api/v1/memories/abc', headers: h, payload: { title: 't' } });
        expectG1Error(res, 405, 'METHOD_NOT_ALLOWED');
        expect(res.headers.allow).toBe('GET, HEAD, PUT, DELETE');
      }
      expectG1Error(await api.list('offset=99999999999999999999'), 400, 'VALIDATION_ERROR');
      expectG1Error(await api.search({ query: 'x'.repeat(10_001) }), 400, 'VALIDATION_ERROR');
    });

    it('validates list and search parameters', async () => {
      await setup();
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1', 'sortBy=content', 'sortOrder=up']) {
        expectG1Error(await api.list(q), 400, 'VALIDATION_ERROR');
      }
      expect(fields(expectG1Error(await api.list('limit=0&sortOrder=up'), 400, 'VALIDATION_ERROR'))).toEqual(['limit', 'sortOrder']);
      expect(fields(expectG1Error(await api.search({}), 400, 'VALIDATION_ERROR'))).toEqual(['query']);
      expectG1Error(await api.search({ query: '   ' }), 400, 'VALIDATION_ERROR');
      expect(fields(expectG1Error(await api.search({ query: 'q', threshold: 1.5, limit: 0 }), 400, 'VALIDATION_ERROR'))).toEqual(['limit', 'threshold']);
      expectG1Error(await api.search({ query: 'q', tags: [3] }), 400, 'VALIDATION_ERROR');
    });

    it('handles short, unknown and ambiguous ids', async () => {
      await setup();
      expect(fields(expectG1Error(await api.get('1234567'), 400, 'VALIDATION_ERROR'))).toEqual(['id']);
      expectG1Error(await api.get('00000000-0000-4000-8000-000000000000'), 404, 'MEMORY_NOT_FOUND');
      expectG1Error(await api.get('zzzzzzzzzz'), 404, 'MEMORY_NOT_FOUND');
      expectG1Error(await api.update('00000000-0000-4000-8000-000000000000', { title: 'x' }), 404, 'MEMORY_NOT_FOUND');
      expectG1Error(await api.delete('00000000-0000-4000-8000-000000000000'), 404, 'MEMORY_NOT_FOUND');
      const ids = ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002'];
      const scope = { tenantId: t.tenant, mode: 'live' as const, workspace: 'default' };
      for (const id of ids) {
        await t.container.storage.memories.insert(makeMemory(scope, { id, title: id }), { modelId: t.container.embedder.modelId, vector: new Float32Array(t.container.embedder.dimensions) });
      }
      const e = expectG1Error(await api.get('aaaaaaaa'), 409, 'AMBIGUOUS_ID');
      expect(e.details[0]!.message).toContain(ids[0]);
      expectG1Error(await api.delete('aaaaaaaa-0000'), 409, 'AMBIGUOUS_ID');
      expect(json(await api.list()).pagination.total).toBe(2);
      expect(json(await api.get('aaaaaaaa-0000-4000-8000-00000000000')).data).toBeUndefined();
      expect(json(await api.get('aaaaaaaa-0000-4000-8000-0000000000')).error.code).toBe('AMBIGUOUS_ID');
    });
  });

  describe('authentication', () => {
    it('answers 401 for a missing, unknown, malformed or revoked key', async () => {
      t = await fileApp();
      const valid = await t.key();
      expectG1Error(await g1(t.app, undefined).list(), 401, 'UNAUTHORIZED');
      expectG1Error(await g1(t.app, 'mnemo_live_').list(), 401, 'UNAUTHORIZED');
      // Right shape, wrong checksum (one character changed).
      const typo = valid.slice(0, 20) + (valid[20] === 'a' ? 'b' : 'a') + valid.slice(21);
      expectG1Error(await g1(t.app, typo).list(), 401, 'UNAUTHORIZED');
      // Right shape and checksum, never issued.
      const elsewhere = uniqueTenant('x');
      const { key: other } = await t.container.apiKeys.create({ tenantId: elsewhere, userId: 'u', tier: 'free', mode: 'live' });
      const [record] = (await t.container.apiKeys.list(elsewhere));
      await t.container.apiKeys.revoke(record!.id);
      expectG1Error(await g1(t.app, other).list(), 401, 'UNAUTHORIZED');
      expectG1Error(await g1(t.app, valid, {}).create({}).then(() => g1(t.app, 'Bearer ' + valid).list()), 401, 'UNAUTHORIZED');
      expect((await g1(t.app, valid).list()).statusCode).toBe(200);
    });

    it('checks the key before the body: an unauthenticated bad body is a 401', async () => {
      t = await fileApp();
      expectG1Error(await g1(t.app, undefined).create({ nonsense: true }), 401, 'UNAUTHORIZED');
    });

    it('refuses writes to a read-only key with 403', async () => {
      t = await fileApp();
      const reader = g1(t.app, await t.key({ scopes: ['memories:read'] }));
      expectG1Error(await reader.create({ title: 't', content: 'c' }), 403, 'PERMISSION_DENIED');
      expect((await reader.list()).statusCode).toBe(200);
    });
  });

  // Rate limits count per key against the clock: each test has its own manual clock, hence its own app.
  describe('rate limits', () => {
    // The loops of 60 to 400 requests: on PostgreSQL in `npm run test:long` only (test/support/test-depth.ts,
    // repeatsOnThisStore).
    it.runIf(repeatsOnThisStore())('limits a free key to 60 requests a minute on the gateway, with Retry-After', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      t = await createTestApp({ overrides: { clock } });
      const api = g1(t.app, await t.key({ tier: 'free' }));
      for (let i = 0; i < 60; i++) expect((await api.list()).statusCode).toBe(200);
      const limited = await api.list();
      expectG1Error(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).toBe(60);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      clock.advance(30_000);
      expect(Number((await api.list()).headers['retry-after'])).toBe(30);
      clock.advance(30_000);
      expect((await api.list()).statusCode).toBe(200);
    });

    it.runIf(repeatsOnThisStore())('gives pro keys 300 a minute and enterprise keys no gateway limit', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      t = await createTestApp({ overrides: { clock } });
      const pro = g1(t.app, await t.key({ tier: 'pro' }));
      for (let i = 0; i < 300; i++) expect((await pro.list()).statusCode).toBe(200);
      expectG1Error(await pro.list(), 429, 'RATE_LIMITED');
      const enterprise = g1(t.app, await t.key({ tier: 'enterprise' }));
      for (let i = 0; i < 400; i++) expect((await enterprise.list()).statusCode).toBe(200);
    });

    it.runIf(repeatsOnThisStore())('caps memory writes at 100 an hour for free keys with QUOTA_EXCEEDED, reads still allowed', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      t = await createTestApp({ overrides: { clock } });
      const api = g1(t.app, await t.key({ tier: 'free' }));
      for (let i = 0; i < 100; i++) {
        clock.advance(2_000); // stay under the 60/min gateway limit
        expect((await api.create({ title: `m${i}`, content: 'c' })).statusCode).toBe(201);
      }
      clock.advance(2_000);
      const over = await api.create({ title: 'one too many', content: 'c' });
      expectG1Error(over, 429, 'QUOTA_EXCEEDED');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(json(await api.list()).pagination.total).toBe(100);
      clock.advance(60 * 60_000);
      expect((await api.create({ title: 'next hour', content: 'c' })).statusCode).toBe(201);
    });
  });

  describe('embedding failures', () => {
    // The remote model, on loopback, failing every request.
    let provider: EmbeddingsServer;
    beforeAll(async () => {
      provider = await startEmbeddingsServer(8);
      provider.failNext(Number.MAX_SAFE_INTEGER);
    });
    afterAll(() => provider.close());

    it('answers 503 and writes nothing when the embeddings provider fails', async () => {
      // Its own app: the embedder is the failing remote one.
      t = await createTestApp({ overrides: { embedder: provider.embedder } });
      const api = g1(t.app, await t.key());
      expectG1Error(await api.create({ title: 't', content: 'c' }), 503, 'SERVICE_UNAVAILABLE');
      expect(json(await api.list()).pagination.total).toBe(0);
      expectG1Error(await api.search({ query: 'q' }), 503, 'SERVICE_UNAVAILABLE');
    });
  });
});
