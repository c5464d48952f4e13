import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { expectG2Error, g2, specPart } from './client.ts';

/**
 * The routes and fields served for @lanonasis/memory-client beside the spec's (G2 list, search, bulk delete, stats;
 * G7 /analytics/{search,access,stats}; the client's create fields): errors and scope rules. Every call of the
 * client itself runs in test/client/memory-client.test.ts.
 */
describe('routes for @lanonasis/memory-client: errors and security', () => {
  let t: TestApp;
  let key: string;
  let tenant: string;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => {
    tenant = uniqueTenant('client');
    key = await t.key({ tenant, user: 'alice' });
  });
  const call = (k: string | undefined, method: 'GET' | 'POST', url: string, payload?: Json, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, headers: { ...(k ? { authorization: `Bearer ${k}` } : {}), ...headers }, ...(payload ? { payload } : {}) });

  it('keeps the spec create: text alone answers exactly the spec fields plus the memory, missing text still names text', async () => {
    const api = g2(t.app, key);
    const res = await api.create({ text: 'plain spec text' });
    expect(specPart(json(res), 'created')).toMatchObject({ status: 'stored', embedding_generated: true, vector_dimensions: 1536 });
    const missing = expectG2Error(await api.create({ title: 'no content' }), 400, 'INVALID_REQUEST');
    expect(missing.details.missing_fields).toEqual(['text']);
  });

  it('answers bad client fields with INVALID_REQUEST naming each field as sent', async () => {
    const api = g2(t.app, key);
    const both = expectG2Error(await api.create({ text: 'a', content: 'b' }), 400, 'INVALID_REQUEST');
    expect(both.details.invalid_fields.map((p: Json) => p.field)).toEqual(['content']);
    const bad = expectG2Error(await api.create({ content: 'x', title: 'x'.repeat(256), memory_type: 'Not A Type', tags: 'ops', summary: 5 }), 400, 'INVALID_REQUEST');
    expect(bad.details.invalid_fields.map((p: Json) => p.field).sort()).toEqual(['memory_type', 'summary', 'tags', 'title']);
    const unknownTopic = expectG2Error(await api.create({ content: 'x', topic_id: '00000000-0000-4000-8000-000000000000' }), 400, 'INVALID_REQUEST');
    expect(unknownTopic.details.invalid_fields.map((p: Json) => p.field)).toEqual(['topic_id']);
    const id = json(await api.create({ content: 'y' })).id;
    const status = expectG2Error(await api.update(id, { status: 'archived' }), 400, 'INVALID_REQUEST');
    expect(status.details.invalid_fields.map((p: Json) => p.field)).toContain('status');
  });

  it('answers bad list, search and bulk-delete parameters with 400 and a missing key with 401, in the G2 envelope', async () => {
    for (const q of ['limit=0', 'limit=101', 'page=0', 'sort=size', 'order=up', 'status=gone']) {
      expectG2Error(await call(key, 'GET', `/api/v1/memory?${q}`), 400, 'INVALID_REQUEST');
    }
    for (const body of [{}, { query: '' }, { query: 'x', limit: 0 }, { query: 'x', threshold: 2 }, { query: 'x', search_mode: 'magic' },
      { query: 'x', filters: { date_range: { from: 'yesterday' } } }]) {
      expectG2Error(await call(key, 'POST', '/api/v1/memory/search', body), 400, 'INVALID_REQUEST');
    }
    for (const body of [{}, { memory_ids: [] }, { memory_ids: Array.from({ length: 101 }, (_, i) => `m${i}`) }, { memory_ids: 'a' }]) {
      expectG2Error(await call(key, 'POST', '/api/v1/memory/bulk/delete', body), 400, 'INVALID_REQUEST');
    }
    for (const [method, url] of [['GET', '/api/v1/memory'], ['POST', '/api/v1/memory/search'], ['POST', '/api/v1/memory/bulk/delete'], ['GET', '/api/v1/memory/stats']] as const) {
      expectG2Error(await call(undefined, method, url, method === 'POST' ? { query: 'x', memory_ids: ['a'] } : undefined), 401, 'UNAUTHORIZED');
    }
    const readOnly = await t.key({ tenant, scopes: ['memories:read'] });
    expectG2Error(await call(readOnly, 'POST', '/api/v1/memory/bulk/delete', { memory_ids: ['a'] }), 403, 'PERMISSION_DENIED');
  });

  it('never lists, finds, counts or deletes another tenant\'s, mode\'s or workspace\'s memories', async () => {
    const mine = json(await g2(t.app, key).create({ title: 'Vault', content: 'the vault code is 1234', tags: ['secret'] }));
    const others = [
      await t.key({ tenant: uniqueTenant('bob'), user: 'bob' }),
      await t.key({ tenant, user: 'alice', mode: 'test' }),
    ];
    const probes: [string, Record<string, string>][] = [[others[0]!, {}], [others[1]!, {}], [key, { 'x-workspace-id': 'elsewhere' }]];
    for (const [k, headers] of probes) {
      expect(json(await call(k, 'GET', '/api/v1/memory?tags=secret', undefined, headers))).toMatchObject({ data: [], pagination: { total: 0 } });
      for (const mode of ['vector', 'text', 'hybrid']) {
        const found = json(await call(k, 'POST', '/api/v1/memory/search', { query: 'vault code 1234', threshold: 0, search_mode: mode }, headers));
        expect(found.results, mode).toEqual([]);
      }
      expect(json(await call(k, 'GET', '/api/v1/memory/stats', undefined, headers))).toMatchObject({ total_memories: 0, recent_memories: [] });
      expect(json(await call(k, 'POST', '/api/v1/memory/bulk/delete', { memory_ids: [mine.id] }, headers))).toEqual({ deleted_count: 0, deleted_ids: [], failed_ids: [mine.id] });
      const stats = json(await call(k, 'GET', '/api/v1/analytics/stats', undefined, headers));
      expect(stats).toMatchObject({ total_memories: 0, top_tags: [] });
      expect(json(await call(k, 'GET', '/api/v1/analytics/access', undefined, headers)).most_accessed).toEqual([]);
    }
    expect(json(await g2(t.app, key).get(mine.id)).title).toBe('Vault');
    // Alice's searches count for Alice only.
    expect(json(await call(key, 'GET', '/api/v1/analytics/search')).total_searches).toBe(0);
    expect(json(await call(others[0]!, 'GET', '/api/v1/analytics/search')).total_searches).toBe(3);
  });

  it('answers bad analytics parameters with G7\'s VALIDATION_ERROR and a missing key with 401', async () => {
    for (const url of ['/api/v1/analytics/search?from=nope', '/api/v1/analytics/search?group_by=year',
      '/api/v1/analytics/search?from=2026-02-01&to=2026-01-01', '/api/v1/analytics/access?to=x']) {
      const res = await call(key, 'GET', url);
      expect(res.statusCode, url).toBe(400);
      expect(json(res).error.code, url).toBe('VALIDATION_ERROR');
    }
    for (const url of ['/api/v1/analytics/search', '/api/v1/analytics/access', '/api/v1/analytics/stats']) {
      expect((await call(undefined, 'GET', url)).statusCode, url).toBe(401);
    }
  });

  it('keeps topics in G1\'s envelope without X-Project-Scope and bare with it; another tenant sees none', async () => {
    const h = { 'x-api-key': key };
    const made = await t.app.inject({ method: 'POST', url: '/api/v1/topics', headers: h, payload: { name: 'Ops', color: '#112233' } });
    expect(json(made)).toMatchObject({ success: true, data: { name: 'Ops', color: '#112233' }, name: 'Ops' });
    expect(json(await t.app.inject({ method: 'GET', url: '/api/v1/topics', headers: h }))).toMatchObject({ success: true, data: [{ name: 'Ops' }] });
    expect(json(await t.app.inject({ method: 'GET', url: '/api/v1/topics', headers: { ...h, 'x-project-scope': 'x' } }))).toMatchObject([{ name: 'Ops' }]);
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/topics', headers: h, payload: { name: 'X', color: 'red' } });
    expect(bad.statusCode).toBe(400);
    const bob = { 'x-api-key': await t.key({ tenant: uniqueTenant('bob') }), 'x-project-scope': 'x' };
    expect(json(await t.app.inject({ method: 'GET', url: '/api/v1/topics', headers: bob }))).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/topics/${json(made).id}`, headers: bob })).statusCode).toBe(404);
  });
});
