import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS } from '../../src/core/api-keys/api-key.types.ts';
import { g1, json, sharedTestApp } from '../support/test-app.ts';

/** `POST /api/v1/memories/forget` (docs/api.md, "Forgetting"). test/cross/forget-marker.test.ts follows a forgotten memory everywhere. */
const app = sharedTestApp();
// Built before the tests (a PostgreSQL store migrates first: slow on a busy machine), not inside the first one.
beforeAll(async () => { await app(); });
afterAll(() => app.close());

describe('G1 forget', () => {
  const forget = async (key: string, body: unknown) => {
    const t = await app();
    return t.app.inject({ method: 'POST', url: '/api/v1/memories/forget', headers: { 'x-api-key': key }, payload: body as object });
  };

  it('previews and forgets the memories a G3 filter matches (type, tags, metadata, dates), in the caller\'s workspace only', async () => {
    const t = await app();
    const key = await t.key({ scopes: [...ALL_PERMISSIONS] });
    const api = g1(t.app, key);
    const ids = [];
    for (const body of [
      { title: 'A', content: 'a', memory_type: 'project', tags: ['q1'], metadata: { team: { name: 'web' } } },
      { title: 'B', content: 'b', memory_type: 'project', tags: ['q1', 'q2'], metadata: { team: { name: 'web' } } },
      { title: 'C', content: 'c', memory_type: 'personal', tags: ['q1'], metadata: { team: { name: 'web' } } },
    ]) ids.push(json(await api.create(body)).data.id as string);
    const elsewhere = json(await g1(t.app, key, { 'x-workspace-id': 'other' }).create({ title: 'A', content: 'a', memory_type: 'project', tags: ['q1'] })).data.id as string;

    const filter = { type: 'project', tags: { $in: ['q1'] }, 'team.name': 'web', date: { $gte: '2000-01-01' } };
    const preview = await forget(key, { filter, dry_run: true });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(json(preview)).toEqual({ success: true, data: { dry_run: true, count: 2, ids: ids.slice(0, 2), ids_truncated: false } });
    const done = await forget(key, { filter });
    expect(json(done)).toEqual({ success: true, data: { dry_run: false, deleted: 2, ids: ids.slice(0, 2) } });
    expect((await api.get(ids[0]!)).statusCode).toBe(404);
    expect((await api.get(ids[2]!)).statusCode).toBe(200);
    expect((await g1(t.app, key, { 'x-workspace-id': 'other' }).get(elsewhere)).statusCode).toBe(200);
  });

  it('refuses an empty or missing filter and a malformed one (400), and a key without memories:forget (403)', async () => {
    const t = await app();
    const key = await t.key({ scopes: [...ALL_PERMISSIONS] });
    for (const body of [{ filter: {} }, { filter: {}, dry_run: true }]) {
      const res = await forget(key, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(json(res).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'filter', message: expect.stringContaining('empty filter') }] });
    }
    expect((await forget(key, {})).statusCode).toBe(400);
    const badDate = await forget(key, { filter: { date: { $gte: 'soon' } } });
    expect(badDate.statusCode).toBe(400);
    expect(json(badDate).error.details).toEqual([{ field: 'filter.date.$gte', message: expect.any(String) }]);
    expect((await forget(key, { filter: { $or: [] } })).statusCode).toBe(400);

    // Made without scopes: every scope but memories:forget.
    const plain = await t.key();
    const refused = await forget(plain, { filter: { type: 'project' }, dry_run: true });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'PERMISSION_DENIED' });
    const writer = await t.key({ scopes: ['memories:read', 'memories:write'] });
    expect((await forget(writer, { filter: { type: 'project' } })).statusCode).toBe(403);
  });

  it('is in the OpenAPI document', async () => {
    const t = await app();
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const op = doc.paths['/api/v1/memories/forget'].post;
    expect(op.summary).toMatch(/Forget/);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '403']));
  });
});
