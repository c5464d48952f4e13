import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';
import { g11 } from './client.ts';

describe('G11 secrets: errors', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());

  it('answers bad bodies with 400 VALIDATION_ERROR naming each field, and stores nothing', async () => {
    const s = g11(t.app, await t.freshTenant());
    for (const [body, field] of [
      [{ value: 'v' }, 'name'],
      [{ name: 'ok' }, 'value'],
      [{ name: 'has/slash', value: 'v' }, 'name'],
      [{ name: '', value: 'v' }, 'name'],
      [{ name: 'ok', value: '' }, 'value'],
      [{ name: 'ok', value: 'v', expiresIn: '30 days' }, 'expiresIn'],
      [{ name: 'ok', value: 'v', expiresIn: '0d' }, 'expiresIn'],
      [{ name: 'ok', value: 'v', expiresIn: '99999y' }, 'expiresIn'],
      [{ name: 'ok', value: 'v', tags: 'prod' }, 'tags'],
      [{ name: 'ok', value: 'v', tags: [''] }, 'tags'],
      [{ name: 'ok', value: 'v'.repeat(64 * 1024 + 1) }, 'value'],
      [{ name: 'ok', value: 42 }, 'value'],
    ] as const) {
      const res = await s.create(body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      const error = json(res).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.fields.map((f: { field: string }) => f.field).join(' '), JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    expect(json(await s.list()).pagination.totalCount).toBe(0);
  });

  it('refuses a second secret of the same name with 409 CONFLICT and keeps the first', async () => {
    const s = g11(t.app, await t.freshTenant());
    await s.create({ name: 'dup', value: 'first' });
    const again = await s.create({ name: 'dup', value: 'second' });
    expect(again.statusCode).toBe(409);
    expect(json(again)).toEqual({ error: { code: 'CONFLICT', message: 'A secret named "dup" already exists', details: { field: 'name' } } });
    expect(json(await s.get('dup')).value).toBe('first');
  });

  it('answers a missing secret, version or path with 404 RESOURCE_NOT_FOUND', async () => {
    const s = g11(t.app, await t.freshTenant());
    for (const res of [await s.get('nope'), await s.update('nope', { value: 'x' }), await s.delete('nope')]) {
      expect(res.statusCode).toBe(404);
      expect(json(res)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: 'Secret "nope" not found', details: {} } });
    }
    await s.create({ name: 'one', value: 'x' });
    expect((await s.get('one', 'version=2')).statusCode).toBe(404);
    const unknown = await t.app.inject({ method: 'GET', url: '/v1/security/nothing-here', headers: { authorization: `Bearer ${await t.key()}` } });
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown).error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('requires application/json on POST and PUT (415, or 400 when the body is missing)', async () => {
    const key = await t.freshTenant();
    const auth = { authorization: `Bearer ${key}` };
    const text = await t.app.inject({ method: 'POST', url: '/v1/security/secrets', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'name=x' });
    expect(text.statusCode).toBe(415);
    expect(json(text).error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', details: { field: 'Content-Type' } });
    const form = await t.app.inject({ method: 'PUT', url: '/v1/security/secrets/x', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'value=y' });
    expect(form.statusCode).toBe(415);
    const none = await t.app.inject({ method: 'POST', url: '/v1/security/secrets', headers: auth });
    expect(none.statusCode).toBe(400);
    expect(json(none).error.code).toBe('VALIDATION_ERROR');
    const broken = await t.app.inject({ method: 'POST', url: '/v1/security/secrets', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"name":' });
    expect(broken.statusCode).toBe(400);
    expect(json(broken).error.code).toBe('VALIDATION_ERROR');
  });

  it('refuses bad query values, cursors and regions', async () => {
    const s = g11(t.app, await t.freshTenant());
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=%21%21notacursor']) {
      const res = await s.list(q);
      expect(res.statusCode, q).toBe(400);
      expect(json(res).error.code, q).toBe('VALIDATION_ERROR');
    }
    expect((await s.get('x', 'version=0')).statusCode).toBe(400);
    const region = await s.create({ name: 'r', value: 'v' }, { 'x-region': 'not a region!' });
    expect(region.statusCode).toBe(400);
    for (const q of ['region=not%20a%20region', `region=${'a'.repeat(33)}`, 'region=-eu', 'region=']) {
      const res = await s.list(q);
      expect(res.statusCode, q).toBe(400);
      expect(json(res).error.details.fields.map((f: { field: string }) => f.field), q).toEqual(['region']);
    }
  });

  it('answers 429 RATE_LIMIT_EXCEEDED with Retry-After past the hourly limit (free: 1000)', async () => {
    const key = await t.freshTenant({ tier: 'free' });
    const s = g11(t.app, key);
    const first = await s.list();
    expect(first.headers['x-ratelimit-limit']).toBe('1000');
    expect(first.headers['x-ratelimit-remaining']).toBe('999');
    // The other 999 of the hour through the limiter itself: a free key's gateway allows only 60 requests a minute.
    const principal = await t.container.apiKeys.authenticate(key);
    for (let i = 0; i < 999; i++) await t.container.limits.security(principal);
    const refused = await s.list();
    expect(refused.statusCode).toBe(429);
    expect(json(refused).error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 1000, remaining: 0 } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-ratelimit-limit']).toBe('1000');
  });
});
