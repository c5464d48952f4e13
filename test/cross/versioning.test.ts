import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';

describe('versioning: deprecated names keep working and say so', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => { key = await t.freshTenant(); });

  it('POST /api/v1/store creates a G1 memory with Deprecation, Sunset and Link headers', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/store', headers: { 'x-api-key': key }, payload: { title: 'legacy', content: 'stored the old way', type: 'meeting' } });
    expect(res.statusCode).toBe(201);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.sunset).toBe('Mon, 01 Nov 2027 00:00:00 GMT');
    expect(res.headers.link).toContain('rel="deprecation"');
    const created = json(res).data;
    expect(created).toMatchObject({ title: 'legacy', memory_type: 'meeting', type: 'meeting' });
    expect(json(await g1(t.app, key).get(created.id)).data.content).toBe('stored the old way');

    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/store', headers: { 'x-api-key': key }, payload: {} });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error.code).toBe('VALIDATION_ERROR');
    expect(bad.headers.deprecation).toBe('true');
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/store', payload: {} })).statusCode).toBe(401);
  });

  it('documents the deprecation in OpenAPI', async () => {
    const spec = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(spec.paths['/api/v1/store'].post.deprecated).toBe(true);
  });
});
