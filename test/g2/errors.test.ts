import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, g1, json, sharedTestApp, type TestApp } from '../support/test-app.ts';
import { DIMS, G2_URL, clientVector, expectG2Error, g2, invalidFields, paddedHashVector } from './client.ts';
import { repeatsOnThisStore } from '../support/test-depth.ts';

const MISSING_UUID = '00000000-0000-4000-8000-000000000000';

describe('G2 errors', () => {
  let t: TestApp;
  let key: string;
  let api: ReturnType<typeof g2>;
  const setup = async (env: Record<string, string> = {}) => {
    t = Object.keys(env).length > 0 ? await createTestApp({ env }) : await fileApp();
    key = await t.key();
    api = g2(t.app, key);
  };
  const total = async () => json(await g1(t.app, key).list()).pagination.total as number;
  // Tests that need nothing special share one app (a fresh tenant each); those with their own configuration, clock or
  // embedder build their own, closed after them.
  const fileApp = sharedTestApp();
  afterAll(() => fileApp.close());
  afterEach(async () => { if (!fileApp.owns(t)) await t?.close(); });

  describe('validation', () => {
    it('names a missing text in missing_fields', async () => {
      await setup();
      for (const body of [{}, { metadata: { tags: ['a'] } }]) {
        const e = expectG2Error(await api.create(body), 400, 'INVALID_REQUEST');
        expect(e.details).toEqual({ missing_fields: ['text'], invalid_fields: [] });
        expect(e.message).toMatch(/text/);
      }
      expect(await total()).toBe(0);
    });

    it('names every mistyped field at once in invalid_fields', async () => {
      await setup();
      const e = expectG2Error(await api.create({
        text: 5, id: 7, metadata: { type: 3, tags: 'x', source: 1, timestamp: 'yesterday' }, embedding: 'x',
      }), 400, 'INVALID_REQUEST');
      expect(e.details.missing_fields).toEqual([]);
      expect(invalidFields(e)).toEqual(['embedding', 'id', 'metadata.source', 'metadata.tags', 'metadata.timestamp', 'metadata.type', 'text']);
      // Missing and invalid together.
      const both = expectG2Error(await api.create({ metadata: [] }), 400, 'INVALID_REQUEST');
      expect(both.details.missing_fields).toEqual(['text']);
      expect(invalidFields(both)).toEqual(['metadata']);
      expect(await total()).toBe(0);
    });

    it('applies the memory rules to text and metadata, without coercing types', async () => {
      await setup();
      const rules: [unknown, string[]][] = [
        [{ text: '' }, ['text']],
        [{ text: '  \n\t\n ' }, ['text']],
        [{ text: 'ok', metadata: { type: 'Meeting Notes' } }, ['metadata.type']],
        [{ text: 'ok', metadata: { tags: ['fine', ''] } }, ['metadata.tags[1]']],
        [{ text: 'ok', metadata: { tags: [1] } }, ['metadata.tags[0]']],
        [{ text: 'ok', metadata: { timestamp: '2026-13-45' } }, ['metadata.timestamp']],
        [{ text: 'ok', metadata: { big: 'x'.repeat(70_000) } }, ['metadata']],
        [{ text: ['a'] }, ['text']],
        [{ text: 'ok', metadata: { tags: ['a'], type: true } }, ['metadata.type']],
      ];
      for (const [body, fields] of rules) {
        const e = expectG2Error(await api.create(body), 400, 'INVALID_REQUEST');
        expect(invalidFields(e), JSON.stringify(body).slice(0, 80)).toEqual(fields);
        expect(e.details.missing_fields).toEqual([]);
      }
      expect(await total()).toBe(0);
      // Accepted timestamp forms.
      for (const timestamp of ['2026-01-15', '2026-01-15T10:30:00Z', '2026-01-15T10:30:00.123+02:00']) {
        expect((await api.create({ text: 'ok', metadata: { timestamp } })).statusCode, timestamp).toBe(201);
      }
    });

    it('refuses an embedding that is not exactly 1536 finite float32 numbers', async () => {
      await setup();
      const good = paddedHashVector('x');
      const withString = [...good];
      (withString as unknown[])[5] = 'oops';
      const huge = [...good];
      huge[9] = 1e39;
      const cases: [unknown, string, RegExp][] = [
        [good.slice(0, DIMS - 1), 'embedding', /exactly 1536 numbers \(got 1535\)/],
        [[...good, 0], 'embedding', /exactly 1536 numbers \(got 1537\)/],
        [[], 'embedding', /exactly 1536/],
        [withString, 'embedding[5]', /number/],
        [huge, 'embedding[9]', /32-bit float/],
        [{ 0: 1 }, 'embedding', /array/],
      ];
      for (const [embedding, field, message] of cases) {
        const e = expectG2Error(await api.create({ text: 'ok', embedding }), 400, 'INVALID_REQUEST');
        expect(e.details.invalid_fields, field).toEqual([{ field, message: expect.stringMatching(message) }]);
      }
      // A number too large for JSON's double range is Infinity after parsing: not a number the schema accepts.
      const inf = `{"text":"ok","embedding":[1e999${',0'.repeat(DIMS - 1)}]}`;
      expect(invalidFields(expectG2Error(await api.raw('POST', G2_URL, inf, 'application/json'), 400, 'INVALID_REQUEST'))).toEqual(['embedding[0]']);
      expect(await total()).toBe(0);
    });

    it('refuses a malformed client id', async () => {
      await setup();
      for (const id of ['', 'has space', '-leading', '_x', 'a/b', 'é', 'x'.repeat(129)]) {
        const e = expectG2Error(await api.create({ id, text: 'ok' }), 400, 'INVALID_REQUEST');
        expect(e.details.invalid_fields, id).toEqual([{ field: 'id', message: expect.stringMatching(/1-128 characters/) }]);
      }
      expect(await total()).toBe(0);
    });

    it('answers a duplicate client id with 409 CONFLICT and leaves the first memory alone', async () => {
      await setup();
      expect((await api.create({ id: 'dup', text: 'first' })).statusCode).toBe(201);
      const e = expectG2Error(await api.create({ id: 'dup', text: 'second' }), 409, 'CONFLICT');
      expect(e.details).toEqual({ field: 'id' });
      expect(json(await api.get('dup')).text).toBe('first');
      expect(await total()).toBe(1);
      // Client ids are case-sensitive.
      expect((await api.create({ id: 'DUP', text: 'third' })).statusCode).toBe(201);
    });

    it('answers unknown ids with 404 on get, update and delete', async () => {
      await setup();
      await api.create({ id: 'exists', text: 'x' });
      for (const id of [`mem_${MISSING_UUID}`, MISSING_UUID, 'nope', 'mem_nope', 'EXISTS', 'exist']) {
        expectG2Error(await api.get(id), 404, 'NOT_FOUND');
        expectG2Error(await api.update(id, { text: 'y' }), 404, 'NOT_FOUND');
        expectG2Error(await api.delete(id), 404, 'NOT_FOUND');
      }
      expect(json(await api.get('exists')).text).toBe('x');
    });

    it('validates updates before looking the memory up, and writes nothing on failure', async () => {
      await setup();
      await api.create({ id: 'u', text: 'orig', metadata: { tags: ['a'] } });
      expect(invalidFields(expectG2Error(await api.update('u', {}), 400, 'INVALID_REQUEST'))).toEqual(['body']);
      expect(invalidFields(expectG2Error(await api.update('u', { text: ' ' }), 400, 'INVALID_REQUEST'))).toEqual(['text']);
      expect(invalidFields(expectG2Error(await api.update('u', { embedding: clientVector() }), 400, 'INVALID_REQUEST'))).toEqual(['body', 'embedding']);
      expect(invalidFields(expectG2Error(await api.update('u', { text: 'new', embedding: clientVector() }), 400, 'INVALID_REQUEST'))).toEqual(['embedding']);
      expect(invalidFields(expectG2Error(await api.update('u', { text: 3, metadata: { type: 'Bad Type', tags: [''] } }), 400, 'INVALID_REQUEST')))
        .toEqual(['metadata.tags[0]', 'metadata.type', 'text']);
      // Bad input about a missing memory is a 400, not a 404.
      expectG2Error(await api.update('nope', {}), 400, 'INVALID_REQUEST');
      const m = json(await api.get('u'));
      expect(m).toMatchObject({ text: 'orig', metadata: { type: 'context', tags: ['a'] } });
    });

    it('answers 413 PAYLOAD_TOO_LARGE for text over the content limit or a body over the body limit', async () => {
      await setup({ MNEMO_MAX_CONTENT_BYTES: '1000', MNEMO_BODY_LIMIT_BYTES: '40000' });
      const e = expectG2Error(await api.create({ text: 'é'.repeat(501) }), 413, 'PAYLOAD_TOO_LARGE');
      expect(e.details).toMatchObject({ field: 'text', max_bytes: 1000 });
      expect((await api.create({ id: 'fits', text: 'x'.repeat(1000) })).statusCode).toBe(201);
      expectG2Error(await api.update('fits', { text: 'x'.repeat(1001) }), 413, 'PAYLOAD_TOO_LARGE');
      expectG2Error(await api.create({ text: 'ok', metadata: { pad: 'x'.repeat(50_000) } }), 413, 'PAYLOAD_TOO_LARGE');
      expect(await total()).toBe(1);
      expect(json(await api.get('fits')).text).toHaveLength(1000);
    });

    it('answers malformed JSON, empty bodies and wrong content types in the envelope', async () => {
      await setup();
      const bodyProblem = async (payload: string) => {
        const e = expectG2Error(await api.raw('POST', G2_URL, payload, 'application/json'), 400, 'INVALID_REQUEST');
        expect(e.details.invalid_fields).toEqual([{ field: 'body', message: expect.any(String) }]);
      };
      await bodyProblem('{"text": "x", ');
      await bodyProblem('');
      await bodyProblem('null');
      await bodyProblem('[1,2]');
      await bodyProblem('"text"');
      expectG2Error(await api.raw('POST', G2_URL, 'text=x', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectG2Error(await api.raw('POST', G2_URL, 'hello', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectG2Error(await api.raw('POST', G2_URL, '{"text":"x"}', undefined), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectG2Error(await api.raw('PUT', `${G2_URL}/x`, '{"text":"x"}', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(await total()).toBe(0);
    });

    it('answers unknown paths, methods and bad URLs under /api/v1/memory in the G2 envelope', async () => {
      await setup();
      const h = { authorization: `Bearer ${key}` };
      expectG2Error(await t.app.inject({ method: 'GET', url: `${G2_URL}/a/b`, headers: h }), 404, 'NOT_FOUND');
      // A known path with another method: 405 with the methods it answers.
      const patched = await t.app.inject({ method: 'PATCH', url: `${G2_URL}/a`, headers: h, payload: {} });
      expectG2Error(patched, 405, 'METHOD_NOT_ALLOWED');
      expect(patched.headers.allow).toBe('GET, HEAD, PUT, DELETE');
      // GET /api/v1/memory is the list @lanonasis/memory-client calls (docs/api.md).
      expectG2Error(await t.app.inject({ method: 'PATCH', url: G2_URL, headers: h, payload: {} }), 405, 'METHOD_NOT_ALLOWED');
      expectG2Error(await t.app.inject({ method: 'GET', url: `${G2_URL}/%ZZ`, headers: h }), 400, 'INVALID_REQUEST');
      expectG2Error(await t.app.inject({ method: 'GET', url: `${G2_URL}/${'a'.repeat(5000)}`, headers: h }), 400, 'INVALID_REQUEST');
    });
  });

  describe('authentication and scopes', () => {
    it('answers 401 for no key, a malformed, unknown or revoked key', async () => {
      await setup();
      const noKey = expectG2Error(await g2(t.app, undefined).get('x'), 401, 'UNAUTHORIZED');
      expect(noKey.details).toEqual({});
      expect(noKey.message).toMatch(/X-API-Key.*Authorization: Bearer/);
      const basic = await g2(t.app, undefined, { authorization: `Basic ${key}` }).create({ text: 'x' });
      expect(expectG2Error(basic, 401, 'UNAUTHORIZED').message).toMatch(/X-API-Key.*Authorization: Bearer/);
      expect(basic.headers['www-authenticate']).toMatch(/^Bearer/);
      expectG2Error(await g2(t.app, 'mnemo_live_nonsense').get('x'), 401, 'UNAUTHORIZED');
      expectG2Error(await t.app.inject({ method: 'GET', url: `${G2_URL}/x`, headers: { authorization: `Basic ${key}` } }), 401, 'UNAUTHORIZED');
      const { key: revoked, record } = await t.container.apiKeys.create({ tenantId: t.tenant, userId: 'u', tier: 'free', mode: 'live' });
      expect((await g2(t.app, revoked).create({ text: 'before revoke' })).statusCode).toBe(201);
      await t.container.apiKeys.revoke(record.id);
      expectG2Error(await g2(t.app, revoked).get('x'), 401, 'UNAUTHORIZED');
      expectG2Error(await g2(t.app, revoked).create({ text: 'after revoke' }), 401, 'UNAUTHORIZED');
      expect(await total()).toBe(1);
    });

    it('checks the key before the body: an unauthenticated bad body is a 401', async () => {
      await setup();
      expectG2Error(await g2(t.app, undefined).create({ nonsense: true }), 401, 'UNAUTHORIZED');
      expectG2Error(await g2(t.app, undefined).raw('POST', G2_URL, '{bad', 'application/json'), 401, 'UNAUTHORIZED');
    });

    it('refuses writes without memories:write and reads without memories:read (403)', async () => {
      await setup();
      await api.create({ id: 'r', text: 'readable' });
      const reader = g2(t.app, await t.key({ scopes: ['memories:read'] }));
      const denied = expectG2Error(await reader.create({ text: 'x' }), 403, 'PERMISSION_DENIED');
      expect(denied.details).toEqual({ required_scope: 'memories:write' });
      expectG2Error(await reader.update('r', { text: 'x' }), 403, 'PERMISSION_DENIED');
      expectG2Error(await reader.delete('r'), 403, 'PERMISSION_DENIED');
      expect((await reader.get('r')).statusCode).toBe(200);
      const writer = g2(t.app, await t.key({ scopes: ['memories:write'] }));
      expect(expectG2Error(await writer.get('r'), 403, 'PERMISSION_DENIED').details).toEqual({ required_scope: 'memories:read' });
      expect((await writer.update('r', { metadata: { tags: ['w'] } })).statusCode).toBe(200);
    });
  });

  describe('rate limits', () => {
    // The loops of 60 and 100 requests: on PostgreSQL in `npm run test:long` only (test/support/test-depth.ts,
    // repeatsOnThisStore).
    it.runIf(repeatsOnThisStore())('caps memory writes of a free key at 100 an hour (shared with G1) with RATE_LIMITED and retry_after', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      t = await createTestApp({ overrides: { clock } });
      key = await t.key({ tier: 'free' });
      api = g2(t.app, key);
      // Rejected writes do not count against the quota.
      expectG2Error(await api.create({}), 400, 'INVALID_REQUEST');
      expectG2Error(await api.update('missing', { text: 'x' }), 404, 'NOT_FOUND');
      for (let i = 0; i < 99; i++) {
        clock.advance(2_000); // 30 a minute: under the gateway's 60
        expect((await api.create({ text: `memory ${i}` })).statusCode).toBe(201);
      }
      clock.advance(2_000);
      // G1 writes count against the same quota: this is the 100th.
      expect((await g1(t.app, key).create({ title: 't', content: 'c' })).statusCode).toBe(201);
      clock.advance(2_000);
      const over = await api.create({ text: 'one too many' });
      const e = expectG2Error(over, 429, 'RATE_LIMITED');
      expect(Number.isInteger(e.retry_after)).toBe(true);
      expect(e.retry_after).toBeGreaterThan(0);
      expect(Number(over.headers['retry-after'])).toBe(e.retry_after);
      expect(e.details).toMatchObject({ limit: 100, remaining: 0, limit_type: 'memory_writes_per_hour' });
      expect(over.headers['x-ratelimit-limit']).toBe('100');
      clock.advance(2_000);
      expectG2Error(await api.delete(`mem_${MISSING_UUID}`), 404, 'NOT_FOUND');
      const first = json(await g1(t.app, key).list('limit=1&sortOrder=asc')).data[0].id as string;
      clock.advance(2_000);
      expectG2Error(await api.delete(first), 429, 'RATE_LIMITED');
      clock.advance(2_000);
      // Reads are still allowed.
      expect((await api.get(first)).statusCode).toBe(200);
      clock.advance(2_000);
      expect(await total()).toBe(100);
      clock.advance(60 * 60_000);
      expect((await api.create({ text: 'next hour' })).statusCode).toBe(201);
    });

    it.runIf(repeatsOnThisStore())('limits a free key to 60 requests a minute on the gateway, in the G2 envelope', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      t = await createTestApp({ overrides: { clock } });
      api = g2(t.app, await t.key({ tier: 'free' }));
      for (let i = 0; i < 60; i++) expect((await api.get('missing')).statusCode).toBe(404);
      const limited = await api.get('missing');
      const e = expectG2Error(limited, 429, 'RATE_LIMITED');
      expect(e.retry_after).toBe(60);
      expect(limited.headers['retry-after']).toBe('60');
      expect(e.details).toMatchObject({ limit: 60, remaining: 0, limit_type: 'requests_per_minute' });
      expectG2Error(await api.create({ text: 'x' }), 429, 'RATE_LIMITED');
      clock.advance(60_000);
      expect((await api.create({ text: 'x' })).statusCode).toBe(201);
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

    it('answers 503 and writes nothing when the model fails; a supplied embedding needs no model', async () => {
      t = await createTestApp({ overrides: { embedder: provider.embedder } });
      key = await t.key();
      api = g2(t.app, key);
      expectG2Error(await api.create({ text: 'needs the model' }), 503, 'SERVICE_UNAVAILABLE');
      expect(await total()).toBe(0);
      const supplied = [0.5, 0.5, 0, 0, 0, 0, 0, 0.25, ...new Array<number>(DIMS - 8).fill(0)];
      const created = json(await api.create({ id: 's', text: 'supplied', embedding: supplied }));
      expect(created).toMatchObject({ embedding_generated: false, tokens_used: 0 });
      expect(json(await api.get('s')).embedding).toEqual(supplied);
      expectG2Error(await api.update('s', { text: 'changed' }), 503, 'SERVICE_UNAVAILABLE');
      expect(json(await api.get('s')).text).toBe('supplied');
    });
  });
});
