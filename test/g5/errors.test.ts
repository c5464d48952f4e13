import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { EmbeddingError, type Embedder } from '../../src/core/embeddings/embedder.port.ts';
import { ManualClock, systemClock } from '../../src/core/clock.ts';
import { createTestApp, json, sharedTestApp, type TestApp } from '../support/test-app.ts';
import { repeatsOnThisStore, requestsOverHttp } from '../support/test-depth.ts';
import { countingLimiter, expectG5Error, g5, G5_URL } from './client.ts';

const AVAILABLE = ['mnemo-embed-1024', 'mnemo-embed-1536', 'mnemo-embed-768'];

describe('G5 errors', () => {
  let t: TestApp;
  let api: ReturnType<typeof g5>;
  let key: string;
  // Tests that need nothing special share one app (a fresh tenant each); those with their own configuration, clock or
  // embedder build their own, closed after them.
  const fileApp = sharedTestApp();
  afterAll(() => fileApp.close());
  afterEach(async () => { if (!fileApp.owns(t)) await t?.close(); });

  const setup = async (options: Parameters<typeof createTestApp>[0] = {}) => {
    t = Object.keys(options).length > 0 ? await createTestApp(options) : await fileApp();
    key = await t.key();
    api = g5(t.app, key);
  };

  describe('validation: INVALID_REQUEST 400 with one reason per problem', () => {
    it('names a missing input missing_required_field', async () => {
      await setup();
      const e = expectG5Error(await api.embed({}), 400, 'INVALID_REQUEST');
      expect(e.details).toEqual({ field: 'input', reason: 'missing_required_field', message: 'is required' });
      expect(expectG5Error(await api.embed({ model: 'mnemo-embed-1024' }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'input', reason: 'missing_required_field' });
    });

    it('names wrong types invalid_type, on the exact field', async () => {
      await setup();
      for (const input of [5, true, null, { text: 'x' }]) {
        const e = expectG5Error(await api.embed({ input }), 400, 'INVALID_REQUEST');
        expect(e.details, JSON.stringify(input)).toMatchObject({ field: 'input', reason: 'invalid_type' });
      }
      expect(expectG5Error(await api.embed({ input: ['ok', 7] }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'input[1]', reason: 'invalid_type' });
      expect(expectG5Error(await api.embed({ input: [['nested']] }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'input[0]', reason: 'invalid_type' });
      expect(expectG5Error(await api.embed({ input: 'x', model: 1024 }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'model', reason: 'invalid_type' });
      for (const body of ['null', '[1,2]', '"hello"', '42']) {
        expect(expectG5Error(await api.raw(body, 'application/json'), 400, 'INVALID_REQUEST').details, body)
          .toMatchObject({ field: 'body', reason: 'invalid_type' });
      }
    });

    it('names blank texts and empty arrays empty_input', async () => {
      await setup();
      for (const input of ['', '   ', '\n\t']) {
        expect(expectG5Error(await api.embed({ input }), 400, 'INVALID_REQUEST').details)
          .toMatchObject({ field: 'input', reason: 'empty_input' });
      }
      expect(expectG5Error(await api.embed({ input: [] }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'input', reason: 'empty_input' });
      expect(expectG5Error(await api.embed({ input: ['fine', ' '] }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'input[1]', reason: 'empty_input' });
    });

    it('names more than 256 texts too_many_inputs', async () => {
      await setup();
      const e = expectG5Error(await api.embed({ input: Array.from({ length: 257 }, () => 'x') }), 400, 'INVALID_REQUEST');
      expect(e.details).toMatchObject({ field: 'input', reason: 'too_many_inputs' });
      expect(e.details.message).toContain('256');
    });

    it('names a text over 8192 tokens input_too_long', async () => {
      await setup();
      const long = 'hello '.repeat(9000); // 9001 cl100k tokens
      const e = expectG5Error(await api.embed({ input: long }), 400, 'INVALID_REQUEST');
      expect(e.details).toMatchObject({ field: 'input', reason: 'input_too_long' });
      expect(e.details.message).toContain('8192');
      expect(expectG5Error(await api.embed({ input: ['short', long] }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'input[1]', reason: 'input_too_long' });
    });

    it('names an unknown model unknown_model and lists the available ones', async () => {
      await setup();
      for (const model of ['text-embedding-3-small', '', 'MNEMO-EMBED-1024']) {
        const e = expectG5Error(await api.embed({ input: 'x', model }), 400, 'INVALID_REQUEST');
        expect(e.details).toMatchObject({ field: 'model', reason: 'unknown_model' });
        expect(e.details.available_models).toEqual(AVAILABLE);
      }
    });

    it('asks for a model when the embedder is too wide to serve the 1024-dimension default', async () => {
      await setup({ overrides: { embedder: createHashingEmbedder({ dimensions: 1200 }) } });
      const e = expectG5Error(await api.embed({ input: 'x' }), 400, 'INVALID_REQUEST');
      expect(e.details).toMatchObject({ field: 'model', reason: 'missing_required_field', available_models: ['mnemo-embed-1536'] });
      expect(expectG5Error(await api.embed({ input: 'x', model: 'mnemo-embed-1024' }), 400, 'INVALID_REQUEST').details)
        .toMatchObject({ field: 'model', reason: 'unknown_model', available_models: ['mnemo-embed-1536'] });
      expect(json(await api.embed({ input: 'x', model: 'mnemo-embed-1536' })).data[0].embedding).toHaveLength(1536);
    });

    it('reports every problem: the first in details, all of them in details.errors', async () => {
      await setup();
      const e = expectG5Error(await api.embed({ input: ['ok', 3, ''], model: 'nope' }, { 'x-client-version': 'v'.repeat(101) }), 400, 'INVALID_REQUEST');
      expect(e.details).toMatchObject({ field: 'input[1]', reason: 'invalid_type', message: 'must be a string' });
      expect(e.details.errors.map((p: { field: string; reason: string }) => [p.field, p.reason])).toEqual([
        ['input[1]', 'invalid_type'],
        ['input[2]', 'empty_input'],
        ['model', 'unknown_model'],
        ['X-Client-Version', 'invalid_value'],
      ]);
      expect(e.details.errors[2].available_models).toEqual(AVAILABLE);
      for (const p of e.details.errors) expect(p.message).toMatch(/\S/);
      // A single problem has no errors list.
      expect(expectG5Error(await api.embed({}), 400, 'INVALID_REQUEST').details).not.toHaveProperty('errors');
    });

    it('answers malformed or empty JSON with invalid_json', async () => {
      await setup();
      for (const body of ['{"input": ', '{input: "x"}', "{'input': 'x'}", '']) {
        expect(expectG5Error(await api.raw(body, 'application/json'), 400, 'INVALID_REQUEST').details, body)
          .toMatchObject({ field: 'body', reason: 'invalid_json' });
      }
    });

    it('refuses an X-Client-Version over 100 characters with invalid_value', async () => {
      await setup();
      const e = expectG5Error(await api.embed({ input: 'x' }, { 'x-client-version': 'v'.repeat(101) }), 400, 'INVALID_REQUEST');
      expect(e.details).toMatchObject({ field: 'X-Client-Version', reason: 'invalid_value' });
    });
  });

  describe('protocol errors', () => {
    it('answers a wrong or missing content type with 415', async () => {
      await setup();
      const cases: [string | undefined, string | undefined][] = [
        ['hello', 'text/plain'],
        ['input=x', 'application/x-www-form-urlencoded'],
        ['{"input":"x"}', undefined],
        [undefined, undefined],
        ['{"input":"x"}', 'application/xml'],
      ];
      for (const [payload, type] of cases) {
        const e = expectG5Error(await api.raw(payload, type), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expect(e.details, String(type)).toEqual({ field: 'Content-Type', reason: 'unsupported_media_type' });
      }
    });

    it('answers a body over the request limit with 413', async () => {
      await setup({ env: { MNEMO_MAX_CONTENT_BYTES: '1000', MNEMO_BODY_LIMIT_BYTES: '2048' } });
      expect(expectG5Error(await api.embed({ input: 'x'.repeat(5000) }), 413, 'PAYLOAD_TOO_LARGE').details)
        .toMatchObject({ reason: 'payload_too_large' });
    });

    it('answers unknown paths with 404 and other methods with 405 in the G5 envelope', async () => {
      await setup();
      const h = { authorization: `Bearer ${key}` };
      expectG5Error(await t.app.inject({ method: 'POST', url: `${G5_URL}/batch`, headers: h, payload: { input: 'x' } }), 404, 'NOT_FOUND');
      const wrongMethod = await t.app.inject({ method: 'GET', url: G5_URL, headers: h });
      expectG5Error(wrongMethod, 405, 'METHOD_NOT_ALLOWED');
      expect(wrongMethod.headers.allow).toBe('POST');
    });

    it('answers 503 SERVICE_UNAVAILABLE when the model fails, and 500 only for a real fault', async () => {
      let failure: Error = new EmbeddingError('model down');
      const embedder: Embedder = {
        modelId: 'broken', dimensions: 256, close: async () => {},
        embed: async () => { throw failure; },
      };
      await setup({ overrides: { embedder } });
      const e = expectG5Error(await api.embed({ input: 'x' }), 503, 'SERVICE_UNAVAILABLE');
      expect(e.details).toEqual({ reason: 'embedding_unavailable' });
      failure = new TypeError('bug');
      const internal = expectG5Error(await api.embed({ input: 'x' }), 500, 'INTERNAL_ERROR');
      expect(internal.details).toEqual({ reason: 'internal_error' });
      expect(internal.message).not.toContain('bug');
      // Bad input is still a 400 even with a broken model.
      expectG5Error(await api.embed({ input: '' }), 400, 'INVALID_REQUEST');
    });
  });

  describe('authentication: UNAUTHORIZED 401', () => {
    it('answers a missing key with reason missing_api_key', async () => {
      await setup();
      const anonymous = g5(t.app, undefined);
      const missing = await anonymous.embed({ input: 'x' });
      expect(expectG5Error(missing, 401, 'UNAUTHORIZED').details).toEqual({ field: 'Authorization', reason: 'missing_api_key' });
      expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(expectG5Error(await anonymous.embed({ input: 'x' }, { authorization: `Basic ${key}` }), 401, 'UNAUTHORIZED').details.reason)
        .toBe('missing_api_key');
      expect(expectG5Error(await anonymous.embed({ input: 'x' }, { authorization: key }), 401, 'UNAUTHORIZED').details.reason)
        .toBe('missing_api_key');
    });

    it('answers an unknown, mistyped, revoked or expired key with reason invalid_api_key', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
      await setup({ overrides: { clock } });
      const invalid = async (k: string) =>
        expect(expectG5Error(await g5(t.app, k).embed({ input: 'x' }), 401, 'UNAUTHORIZED').details)
          .toEqual({ field: 'Authorization', reason: 'invalid_api_key' });
      await invalid('mnemo_live_');
      await invalid(key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21));
      const { record, key: revoked } = await t.container.apiKeys.create({ tenantId: t.tenant, userId: 'u', tier: 'free', mode: 'live' });
      expect((await g5(t.app, revoked).embed({ input: 'x' })).statusCode).toBe(200);
      await t.container.apiKeys.revoke(record.id);
      await invalid(revoked);
      const { key: expiring } = await t.container.apiKeys.create({
        tenantId: t.tenant, userId: 'u', tier: 'free', mode: 'live', expiresAt: new Date(Date.UTC(2026, 0, 1, 13)),
      });
      expect((await g5(t.app, expiring).embed({ input: 'x' })).statusCode).toBe(200);
      clock.advance(60 * 60_000);
      await invalid(expiring);
      expect((await api.embed({ input: 'x' })).statusCode).toBe(200);
    });

    it('checks the key before the body: an unauthenticated bad request is a 401', async () => {
      await setup();
      const anonymous = g5(t.app, undefined);
      expectG5Error(await anonymous.embed({}), 401, 'UNAUTHORIZED');
      expectG5Error(await anonymous.raw('{"input": ', 'application/json'), 401, 'UNAUTHORIZED');
      expectG5Error(await anonymous.raw('x', 'text/plain'), 401, 'UNAUTHORIZED');
    });
  });

  describe('rate limits: RATE_LIMITED 429', () => {
    // The loops of 60 to 1000 requests: on PostgreSQL in `npm run test:long` only (test/support/test-depth.ts,
    // repeatsOnThisStore).
    it.runIf(repeatsOnThisStore())('allows a free key 1000 embedding requests an hour, then answers 429 with limit details and Retry-After', async () => {
      const start = Date.UTC(2026, 0, 1, 12, 0, 0);
      const clock = new ManualClock(start);
      await setup({ overrides: { clock } });
      const key = await t.key({ tier: 'free' });
      const free = g5(t.app, key);
      const principal = await t.container.apiKeys.authenticate(key);
      // 3.5 s apart: about 17 a minute (under the gateway's 60), 1000 of them in 58 minutes. In `npm test` the first
      // 990 go straight to the quota the route counts against (test/support/test-depth.ts, requestsOverHttp).
      const overHttp = requestsOverHttp(1000);
      for (let i = 0; i < 1000; i++) {
        if (i < 1000 - overHttp) {
          await t.container.limits.embeddings(principal);
        } else {
          const res = await free.embed({ input: `text ${i}` });
          if (res.statusCode !== 200) expect.fail(`request ${i + 1}: ${res.statusCode} ${res.body}`);
        }
        clock.advance(3_500);
      }
      expect(clock.now().getTime() - start).toBeLessThan(60 * 60_000);
      const limited = await free.embed({ input: 'one too many' });
      const e = expectG5Error(limited, 429, 'RATE_LIMITED');
      expect(e.details).toEqual({ reason: 'rate_limit_exceeded', limit: 1000, remaining: 0, reset_at: '2026-01-01T13:00:00.000Z' });
      expect(e.message).toMatch(/hour/);
      expect(Number(limited.headers['retry-after'])).toBe(Math.ceil((start + 3_600_000 - clock.now().getTime()) / 1000));
      expect(limited.headers['x-ratelimit-limit']).toBe('1000');
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      // Refused requests do not count, and the next hour starts afresh.
      clock.set(start + 3_600_000);
      expect((await free.embed({ input: 'next hour' })).statusCode).toBe(200);
    });

    it.runIf(repeatsOnThisStore())('counts a request once however many texts it has', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      await setup({ overrides: { clock } });
      const free = g5(t.app, await t.key({ tier: 'free' }));
      for (let i = 0; i < 100; i++) {
        expect((await free.embed({ input: Array.from({ length: 20 }, (_, j) => `t${j}`) })).statusCode).toBe(200);
        clock.advance(3_000);
      }
      // 2000 texts in 100 requests: still within the 1000 requests.
      expect((await free.embed({ input: 'x' })).statusCode).toBe(200);
    });

    it('counts a request against the hourly limit (once) when its tokens are counted, even if it is then too long', async () => {
      const limiter = countingLimiter(systemClock);
      await setup({ overrides: { limiter } });
      const free = g5(t.app, await t.key({ tier: 'free' }));
      await free.embed({});
      await free.embed({ input: '' });
      await free.embed({ input: 'x', model: 'nope' });
      await free.raw('{', 'application/json');
      await free.raw('x', 'text/plain');
      expect(limiter.hits.get('gateway')).toBe(5);
      expect(limiter.hits.get('embeddings') ?? 0).toBe(0);
      // Refused only after its tokens were counted: work done for the caller, so it counts.
      expectG5Error(await free.embed({ input: 'hello '.repeat(9000) }), 400, 'INVALID_REQUEST');
      expect(limiter.hits.get('embeddings')).toBe(1);
      await free.embed({ input: ['a', 'b', 'c'] });
      await free.embed({ input: 'd' });
      expect(limiter.hits.get('embeddings')).toBe(3);
      expect(limiter.hits.get('gateway')).toBe(8);
    });

    it.runIf(repeatsOnThisStore())('answers the gateway per-minute limit (61st request of a free key) in the same envelope', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      await setup({ overrides: { clock } });
      const free = g5(t.app, await t.key({ tier: 'free' }));
      for (let i = 0; i < 60; i++) expect((await free.embed({ input: `t${i}` })).statusCode).toBe(200);
      clock.advance(15_000);
      const limited = await free.embed({ input: 'x' });
      const e = expectG5Error(limited, 429, 'RATE_LIMITED');
      expect(e.details).toEqual({ reason: 'rate_limit_exceeded', limit: 60, remaining: 0, reset_at: '2026-01-01T12:01:00.000Z' });
      expect(e.message).toMatch(/minute/);
      expect(limited.headers['retry-after']).toBe('45');
      clock.advance(45_000);
      expect((await free.embed({ input: 'x' })).statusCode).toBe(200);
    });

    it.runIf(repeatsOnThisStore())('gives a pro key more than 1000 requests an hour', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      await setup({ overrides: { clock } });
      const key = await t.key({ tier: 'pro' });
      const pro = g5(t.app, key);
      const principal = await t.container.apiKeys.authenticate(key);
      // 1 s apart: 60 a minute (under the pro gateway's 300), 1001 of them within the hour. In `npm test` the first
      // 991 go straight to the quota the route counts against (test/support/test-depth.ts, requestsOverHttp).
      const overHttp = requestsOverHttp(1001);
      for (let i = 0; i < 1001; i++) {
        if (i < 1001 - overHttp) {
          await t.container.limits.embeddings(principal);
        } else {
          const res = await pro.embed({ input: `text ${i}` });
          if (res.statusCode !== 200) expect.fail(`request ${i + 1}: ${res.statusCode} ${res.body}`);
        }
        clock.advance(1_000);
      }
      expect(json(await pro.embed({ input: 'still fine' })).object).toBe('list');
      // All 1002 counted in the one hourly quota of the key (pro: 10,000), this check's own the 1003rd.
      expect((await t.container.limits.embeddings(principal))!.remaining).toBe(10_000 - 1003);
    });
  });
});
