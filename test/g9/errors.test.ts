import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, json, type Json, type TestApp } from '../support/test-app.ts';
import { g9 } from './client.ts';

const fields = (body: Json) => (body.error.details as Json[]).map((d) => d.field);
const valid = { url: 'https://hooks.example.com/x', events: ['memory.created'] };

describe('G9 webhooks: errors', () => {
  let t: TestApp;
  let clock: ManualClock;
  let api: ReturnType<typeof g9>;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 30, 0));
    t = await createTestApp({ overrides: { clock } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 2, 1, 9, 30, 0)); // each test starts at the same time, as with an app of its own
    api = g9(t.app, await t.freshTenant());
  });

  it('answers 400 VALIDATION_ERROR in the G9 envelope, naming the bad url', async () => {
    for (const [url, message] of [
      ['ftp://files.example.com/x', /http or https/],
      ['javascript:alert(1)', /http or https/],
      ['not a url', /absolute http or https URL/],
      ['https://user:pw@hooks.example.com/', /credentials/],
      [`https://hooks.example.com/${'a'.repeat(2048)}`, /2048/],
      ['http://127.0.0.1/hook', /loopback/],
      ['http://[::1]:8080/hook', /loopback/],
      ['http://10.1.2.3/hook', /private/],
      ['http://169.254.169.254/latest/meta-data', /linkLocal|link-local/],
      ['http://localhost:3000/hook', /loopback/],
      ['http://[::127.0.0.1]/hook', /IPv4-compatible\) carries 127\.0\.0\.1 is a loopback/],
      ['http://[64:ff9b::169.254.169.254]/hook', /NAT64\) carries 169\.254\.169\.254 is a linkLocal/],
      ['http://[2002:7f00:1::]/hook', /6to4\) carries 127\.0\.0\.1 is a loopback/],
      ['http://[2001:0:808:808::f5ff:fffe]/hook', /Teredo\) carries 10\.0\.0\.1 is a private/],
    ] as const) {
      const res = await api.create({ ...valid, url });
      expect(res.statusCode, url).toBe(400);
      const body = json(res);
      expect(body).toEqual({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: [{ field: 'url', message: expect.stringMatching(message) }], request_id: expect.any(String) },
      });
    }
    expect(json(await api.list()).data.pagination.total).toBe(0);
  });

  it('names unknown, missing and empty event lists', async () => {
    let body = json(await api.create({ ...valid, events: ['memory.created', 'transfer.completed', 'nope'] }));
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(fields(body)).toEqual(['events[1]', 'events[2]']);
    expect(body.error.details[0].message).toMatch(/unknown event type "transfer.completed"/);
    body = json(await api.create({ ...valid, events: [] }));
    expect(fields(body)).toEqual(['events']);
    body = json(await api.create({ url: valid.url }));
    expect(body.error.details).toEqual([{ field: 'events', message: 'is required' }]);
    body = json(await api.create({ events: valid.events }));
    expect(body.error.details).toEqual([{ field: 'url', message: 'is required' }]);
  });

  it('names bad retry_policy fields, secrets and filters, all at once', async () => {
    const res = await api.create({
      ...valid,
      secret: 'short',
      retry_policy: { max_attempts: 0, backoff_multiplier: 11, max_delay: 86_401 },
    });
    expect(res.statusCode).toBe(400);
    expect(fields(json(res)).sort()).toEqual(['retry_policy.backoff_multiplier', 'retry_policy.max_attempts', 'retry_policy.max_delay', 'secret']);
    const more = json(await api.create({ ...valid, retry_policy: { max_attempts: 2.5 }, active: 'yes' }));
    expect(fields(more).sort()).toEqual(['active', 'retry_policy.max_attempts']);
    const filters = json(await api.create({ ...valid, filters: { tags: 5, memory_type: [], 'bad key': 'x', nested: { a: 1 }, ok: 'fine' } }));
    expect(fields(filters).sort()).toEqual(['filters.bad key', 'filters.memory_type', 'filters.nested', 'filters.tags']);
    const secret = json(await api.create({ ...valid, secret: 'has spaces in the secret' }));
    expect(fields(secret)).toEqual(['secret']);
  });

  it('checks updates the same way and refuses an empty one', async () => {
    const id = json(await api.create(valid)).data.id;
    expect(fields(json(await api.update(id, {})))).toEqual(['body']);
    expect(fields(json(await api.update(id, { events: ['nope'] })))).toEqual(['events[0]']);
    expect(fields(json(await api.update(id, { retry_policy: { max_attempts: 11 } })))).toEqual(['retry_policy.max_attempts']);
    expect(fields(json(await api.update(id, { url: 'http://127.0.0.1/' })))).toEqual(['url']);
    expect(json(await api.update(id, { url: 'http://[::127.0.0.1]/' })).error.details).toEqual([{ field: 'url', message: expect.stringMatching(/carries 127\.0\.0\.1 is a loopback/) }]);
    expect(json(await api.get(id)).data.url).toBe(valid.url);
  });

  it('answers WEBHOOK_NOT_FOUND for unknown ids and NOT_FOUND for unknown paths', async () => {
    for (const res of [await api.get('webhook_nope'), await api.update('webhook_nope', { active: false }), await api.delete('webhook_nope')]) {
      expect(res.statusCode).toBe(404);
      expect(json(res).error.code).toBe('WEBHOOK_NOT_FOUND');
    }
    // A bad body for an unknown id is still a 404.
    expect(json(await api.update('webhook_nope', { events: ['nope'] })).error.code).toBe('WEBHOOK_NOT_FOUND');
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/webhooks/a/b/c', headers: { authorization: 'Bearer x' } });
    expect(res.statusCode).toBe(404);
    expect(json(res)).toMatchObject({ success: false, error: { code: 'NOT_FOUND', details: [] } });
  });

  it('validates list parameters', async () => {
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'active=maybe', 'event=nope']) {
      const res = await api.list(q);
      expect(res.statusCode, q).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
    }
    expect(fields(json(await api.list('limit=500')))).toEqual(['limit']);
  });

  it('answers 415 and malformed JSON in the G9 envelope', async () => {
    const key = await t.key();
    const wrongType = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, payload: 'hi' });
    expect(wrongType.statusCode).toBe(415);
    expect(json(wrongType).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const broken = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: '{"url":' });
    expect(broken.statusCode).toBe(400);
    expect(json(broken).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body' }] });
  });

  it('allows 10 creations per hour per key, then 429 RATE_LIMITED with Retry-After; invalid requests do not count', async () => {
    await api.create({ ...valid, url: 'ftp://x/' });
    for (let i = 0; i < 10; i++) expect((await api.create(valid)).statusCode).toBe(201);
    const res = await api.create(valid);
    expect(res.statusCode).toBe(429);
    expect(json(res)).toMatchObject({ success: false, error: { code: 'RATE_LIMITED', details: [] } });
    expect(res.headers['retry-after']).toBe('1800');
    expect(res.headers['x-ratelimit-limit']).toBe('10');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    // Another key of the same tenant has its own allowance; reads and updates are not limited.
    expect((await g9(t.app, await t.key()).create(valid)).statusCode).toBe(201);
    expect((await api.list()).statusCode).toBe(200);
    clock.advance(30 * 60 * 1000);
    expect((await api.create(valid)).statusCode).toBe(201);
  });

  it('requires memories:write to change and memories:read to read', async () => {
    const reader = g9(t.app, await t.key({ scopes: ['memories:read'] }));
    const writer = g9(t.app, await t.key({ scopes: ['memories:write'] }));
    const id = json(await api.create(valid)).data.id;
    for (const res of [await reader.create(valid), await reader.update(id, { active: false }), await reader.delete(id), await writer.list(), await writer.get(id)]) {
      expect(res.statusCode).toBe(403);
      expect(json(res).error.code).toBe('PERMISSION_DENIED');
    }
    expect((await reader.list()).statusCode).toBe(200);
    expect((await writer.update(id, { active: false })).statusCode).toBe(200);
  });
});

describe('G9 webhooks: MNEMO_WEBHOOK_ALLOW_CIDRS', () => {
  let t: TestApp;
  // Its own app (one for this block): the allow-list is configuration.
  beforeAll(async () => { t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8, ::1/128' } }); });
  afterAll(() => t.close());

  it('accepts allow-listed private addresses and still refuses the others', async () => {
    const api = g9(t.app, await t.key());
    for (const url of ['http://127.0.0.1:9000/hook', 'http://[::1]:9000/hook', 'http://localhost:9000/hook']) {
      expect((await api.create({ url, events: ['memory.created'] })).statusCode, url).toBe(201);
    }
    expect((await api.create({ url: 'http://192.168.1.10/hook', events: ['memory.created'] })).statusCode).toBe(400);
  });

  it('stops the start on a bad value, naming the variable', () => {
    expect(() => loadConfig({ MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8,not-a-cidr' })).toThrow(/MNEMO_WEBHOOK_ALLOW_CIDRS/);
    expect(loadConfig({ MNEMO_WEBHOOK_ALLOW_CIDRS: ' 10.0.0.0/8 , ::1 ' }).webhookAllowCidrs).toEqual(['10.0.0.0/8', '::1/128']);
    expect(loadConfig({}).webhookAllowCidrs).toEqual([]);
  });
});
