import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { g1, json, type Json } from '../support/test-app.ts';
import { bearer, openStream, startLiveApp, type LiveApp, type SseClient } from '../streams/support.ts';

/**
 * Supersession, history and near-duplicates on G1 (docs/memory-lifecycle.md): create with `supersedes` (atomic), the
 * supersede route after the fact, memory.superseded on the G8 stream, the chain in history both ways, the versions
 * updates keep, a deleted memory's tombstone, `return_related` (which never supersedes), and the errors of each.
 */
describe('G1 supersession, history and related memories', () => {
  let t: LiveApp;
  let api: ReturnType<typeof g1>;
  let key: string;
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0));
  const streams: SseClient[] = [];
  const headers = () => ({ 'x-api-key': key });
  const supersede = (id: string, body: object) =>
    t.app.inject({ method: 'POST', url: `/api/v1/memories/${id}/supersede`, headers: headers(), payload: body });
  const history = (id: string, query = '') => t.app.inject({ method: 'GET', url: `/api/v1/memories/${id}/history${query}`, headers: headers() });
  const create = async (body: object) => {
    clock.advance(60_000);
    const res = await api.create(body);
    expect(res.statusCode, res.body).toBe(201);
    return json(res);
  };
  const errorOf = (res: { statusCode: number; body: string }, status: number) => {
    expect(res.statusCode, res.body).toBe(status);
    return JSON.parse(res.body).error as Json;
  };

  beforeAll(async () => {
    t = await startLiveApp({ clock });
    key = await t.freshTenant();
    api = g1(t.app, key);
  });
  afterEach(() => { for (const s of streams.splice(0)) s.close(); });
  afterAll(() => t.close());

  it('create with supersedes replaces the old memory atomically, emits memory.superseded and shows the chain both ways', async () => {
    const stream = await openStream(`${t.url}/api/v1/stream?events=memory.superseded`, bearer(key));
    streams.push(stream);
    expect(stream.status).toBe(200);
    const v1 = (await create({ title: 'Office address', content: 'The office is at 12 Elm Street' })).data;
    const v2 = (await create({ title: 'Office address', content: 'The office moved to 40 Oak Avenue', supersedes: [v1.id] })).data;
    expect(v2).toMatchObject({ superseded_by: null, valid_until: null });

    const old = json(await api.get(v1.id)).data;
    expect(old).toMatchObject({ superseded_by: v2.id, valid_until: v2.valid_from, version: 1 });

    const frame = await stream.waitFor((f) => f.event === 'memory.superseded');
    expect(frame.data).toMatchObject({
      object: 'memory', id: v1.id, superseded_by: v2.id, valid_until: v2.valid_from, superseded_by_user: 'user-1',
    });

    // Out of default search and list; back, marked, with include_expired.
    const found = json(await api.search({ query: 'office address', threshold: 0.5 })).data.results as Json[];
    expect(found.map((r) => r.id)).toEqual([v2.id]);
    const all = json(await api.search({ query: 'office address', threshold: 0.5, include_expired: true })).data.results as Json[];
    expect(all.find((r) => r.id === v1.id)).toMatchObject({ validity: 'superseded', superseded_by: v2.id });
    expect(all.find((r) => r.id === v2.id)?.validity).toBe('valid');

    const backward = json(await history(v2.id)).data;
    expect(backward.chain).toEqual({ supersedes: [{ id: v1.id, title: 'Office address', valid_from: v1.valid_from, valid_until: v2.valid_from }], superseded_by: [] });
    const forward = json(await history(v1.id)).data;
    expect(forward.chain.superseded_by.map((l: Json) => l.id)).toEqual([v2.id]);
    expect(forward.memory).toMatchObject({ id: v1.id, superseded_by: v2.id });
    expect(forward.tombstone).toBeNull();
  });

  it('refuses a bad supersedes (nothing is written) and answers the supersede route\'s errors in G1\'s envelope', async () => {
    const before = json(await api.list('include_expired=true')).pagination.total as number;
    const unknown = '00000000-0000-4000-8000-000000000000';
    clock.advance(60_000);
    const missing = errorOf(await api.create({ title: 'x', content: 'y', supersedes: [unknown] }), 404);
    expect(missing.code).toBe('MEMORY_NOT_FOUND');
    expect(missing.details.map((d: Json) => d.field)).toEqual(['supersedes']);
    expect(errorOf(await api.create({ title: 'x', content: 'y', supersedes: ['not-an-id'] }), 400).code).toBe('VALIDATION_ERROR');
    expect(json(await api.list('include_expired=true')).pagination.total).toBe(before);

    const a = (await create({ title: 'Team lead', content: 'Ana leads the platform team' })).data;
    const b = (await create({ title: 'Team lead', content: 'Bo leads the platform team' })).data;
    const c = (await create({ title: 'Team lead', content: 'Cy leads the platform team' })).data;
    expect(errorOf(await supersede(a.id, {}), 400).code).toBe('VALIDATION_ERROR');
    expect(errorOf(await supersede(unknown, { by: b.id }), 404).code).toBe('MEMORY_NOT_FOUND');
    expect(errorOf(await supersede(a.id, { by: unknown }), 404).code).toBe('MEMORY_NOT_FOUND');
    expect(errorOf(await supersede(a.id, { by: 'ffffffff' }), 404).details.map((d: Json) => d.field)).toEqual(['by']);
    // by must be valid from after the memory it replaces.
    expect(errorOf(await supersede(b.id, { by: a.id }), 400).code).toBe('VALIDATION_ERROR');

    // After the fact: a replaced by b; again by b changes nothing; by c is a conflict; b by a would make a loop.
    const done = await supersede(a.id.slice(0, 8), { by: b.id });
    expect(done.statusCode, done.body).toBe(200);
    expect(json(done).data).toMatchObject({ id: a.id, superseded_by: b.id, valid_until: b.valid_from });
    expect(json(await supersede(a.id, { by: b.id })).data.superseded_by).toBe(b.id);
    expect(errorOf(await supersede(a.id, { by: c.id }), 409).code).toBe('CONFLICT');
    expect(errorOf(await supersede(b.id, { by: a.id }), 400).details.map((d: Json) => d.field)).toEqual(['by']);
  });

  it('history lists the versions updates kept, newest first and paged; a deleted memory answers its tombstone', async () => {
    const m = (await create({ title: 'Standup', content: 'Standup is at 9:00', tags: ['ritual'] })).data;
    clock.advance(60_000);
    expect((await api.update(m.id, { content: 'Standup is at 9:30' })).statusCode).toBe(200);
    clock.advance(60_000);
    const now = json(await api.update(m.id, { title: 'Daily standup', tags: ['ritual', 'team'] })).data;
    expect(now.version).toBe(3);

    const h = json(await history(m.id)).data;
    expect(h.memory).toMatchObject({ id: m.id, version: 3, title: 'Daily standup' });
    expect(h.versions.map((v: Json) => [v.version, v.title, v.content])).toEqual([
      [2, 'Standup', 'Standup is at 9:30'], [1, 'Standup', 'Standup is at 9:00'],
    ]);
    expect(h.versions[1]).toMatchObject({ tags: ['ritual'], memory_type: 'context', written_at: m.created_at, written_by: 'user-1', replaced_by: 'user-1' });
    expect(h.pagination).toEqual({ total: 2, limit: 20, offset: 0, hasMore: false });
    const page = json(await history(m.id, '?limit=1')).data;
    expect(page.versions.map((v: Json) => v.version)).toEqual([2]);
    expect(page.pagination.hasMore).toBe(true);
    expect(errorOf(await history(m.id, '?limit=0'), 400).code).toBe('VALIDATION_ERROR');

    expect((await api.delete(m.id)).statusCode).toBe(200);
    const gone = json(await history(m.id)).data;
    expect(gone).toMatchObject({ memory_id: m.id, memory: null, versions: [], tombstone: { id: m.id, deleted_by: 'user-1', reason: 'user_request' } });
    expect(JSON.stringify(gone)).not.toContain('Standup');
    expect(errorOf(await history('00000000-0000-4000-8000-000000000000'), 404).code).toBe('MEMORY_NOT_FOUND');
  });

  it('return_related shows near-duplicates valid now and never supersedes them', async () => {
    const first = (await create({ title: 'Quarterly report', content: 'The quarterly report is due on Friday' })).data;
    const plain = await create({ title: 'Quarterly report', content: 'The quarterly report is due on Friday afternoon' });
    expect(plain).not.toHaveProperty('related');
    const second = await create({ title: 'Quarterly report', content: 'The quarterly report is due on Friday morning', return_related: true });
    const related = second.related as Json[];
    expect(related.map((r) => r.id)).toContain(first.id);
    for (const r of related) {
      expect(r.similarity).toBeGreaterThanOrEqual(0.85);
      expect(Object.keys(r).sort()).toEqual(['id', 'similarity', 'title']);
    }
    expect(json(await api.get(first.id)).data.superseded_by).toBeNull();
    const updated = json(await api.update(first.id, { tags: ['finance'], return_related: true }));
    expect(updated.related.map((r: Json) => r.id)).toContain(second.data.id);
  });

  it('documents the new routes and fields in the OpenAPI document', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(doc.paths['/api/v1/memories/{id}/supersede'].post.responses).toHaveProperty('409');
    expect(doc.paths['/api/v1/memories/{id}/history'].get.responses).toHaveProperty('404');
    const props = (op: Json) => op.requestBody.content['application/json'].schema.properties as Json;
    expect(Object.keys(props(doc.paths['/api/v1/memories'].post))).toEqual(expect.arrayContaining(['valid_from', 'valid_until', 'supersedes', 'return_related']));
    expect(Object.keys(props(doc.paths['/api/v1/search'].post))).toEqual(expect.arrayContaining(['as_of', 'include_expired']));
  });
});
