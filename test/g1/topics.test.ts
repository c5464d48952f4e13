import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';

function topicsApi(t: TestApp, key: string) {
  const headers = { 'x-api-key': key };
  return {
    create: (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/topics', headers, payload }),
    list: (query = '') => t.app.inject({ method: 'GET', url: `/api/v1/topics${query ? `?${query}` : ''}`, headers }),
    get: (id: string) => t.app.inject({ method: 'GET', url: `/api/v1/topics/${id}`, headers }),
    update: (id: string, payload: object) => t.app.inject({ method: 'PUT', url: `/api/v1/topics/${id}`, headers, payload }),
    delete: (id: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/topics/${id}`, headers }),
    memories: (id: string, query = '') => t.app.inject({ method: 'GET', url: `/api/v1/topics/${id}/memories${query ? `?${query}` : ''}`, headers }),
  };
}

describe('topics', () => {
  let t: TestApp;
  let key: string;
  let topics: ReturnType<typeof topicsApi>;
  let memories: ReturnType<typeof g1>;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => {
    key = await t.freshTenant();
    topics = topicsApi(t, key);
    memories = g1(t.app, key);
  });

  it('creates, reads, updates, lists and deletes topics; memories point at them', async () => {
    const created = await topics.create({ name: 'Projects', description: 'All projects', metadata: { owner: 'ann' } });
    expect(created.statusCode).toBe(201);
    const project = json(created).data;
    expect(project).toMatchObject({ name: 'Projects', description: 'All projects', parent_id: null, metadata: { owner: 'ann' }, memory_count: 0 });
    const child = json(await topics.create({ name: 'Apollo', parent_id: project.id })).data;

    const m1 = json(await memories.create({ title: 'Kickoff', content: 'Apollo kickoff notes', topic_id: child.id })).data;
    await memories.create({ title: 'Budget', content: 'Apollo budget', topic_id: child.id });
    await memories.create({ title: 'Unrelated', content: 'no topic' });
    expect(m1.topic_id).toBe(child.id);

    expect(json(await topics.get(child.id)).data).toMatchObject({ name: 'Apollo', parent_id: project.id, memory_count: 2 });
    const ofTopic = json(await topics.memories(child.id, 'sortBy=title&sortOrder=asc'));
    expect(ofTopic.data.map((m: Json) => m.title)).toEqual(['Budget', 'Kickoff']);
    expect(ofTopic.pagination).toEqual({ total: 2, page: 1, limit: 20, hasMore: false });

    const flat = json(await topics.list());
    expect(flat.data.map((x: Json) => x.name)).toEqual(['Projects', 'Apollo']);
    expect(flat.pagination.total).toBe(2);
    const tree = json(await topics.list('include_hierarchy=true')).data;
    expect(tree).toHaveLength(1);
    expect(tree[0]).toMatchObject({ name: 'Projects', children: [{ name: 'Apollo', memory_count: 2, children: [] }] });

    const renamed = json(await topics.update(child.id, { name: 'Apollo 11', parent_id: null })).data;
    expect(renamed).toMatchObject({ name: 'Apollo 11', parent_id: null });
    expect(Date.parse(renamed.updated_at)).toBeGreaterThan(Date.parse(child.updated_at));

    // Moving a memory to another topic, then deleting the topic: memories stay, without a topic.
    await memories.update(m1.id, { topic_id: project.id });
    expect(json(await topics.get(project.id)).data.memory_count).toBe(1);
    const del = await topics.delete(project.id);
    expect(json(del)).toMatchObject({ success: true, data: { id: project.id } });
    expect((await topics.get(project.id)).statusCode).toBe(404);
    expect(json(await memories.get(m1.id)).data.topic_id).toBeNull();
  });

  it('moves child topics up when their parent is deleted', async () => {
    const a = json(await topics.create({ name: 'A' })).data;
    const b = json(await topics.create({ name: 'B', parent_id: a.id })).data;
    const c = json(await topics.create({ name: 'C', parent_id: b.id })).data;
    await topics.delete(b.id);
    expect(json(await topics.get(c.id)).data.parent_id).toBe(a.id);
  });

  it('rejects unknown topics, bad fields, duplicate names and cycles', async () => {
    const unknown = '7d0e8a40-1111-4222-8333-944455566677';
    const bad = await memories.create({ title: 't', content: 'c', topic_id: unknown });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'topic_id', message: 'no such topic' }] });
    const { id } = json(await memories.create({ title: 't', content: 'c' })).data;
    expect((await memories.update(id, { topic_id: unknown })).statusCode).toBe(400);
    expect(json(await memories.list()).pagination.total).toBe(1);

    expect(json(await topics.create({})).error.details.map((d: Json) => d.field)).toEqual(['name']);
    expect(json(await topics.create({ name: 'x', parent_id: unknown })).error.details).toEqual([{ field: 'parent_id', message: 'no such topic' }]);
    const a = json(await topics.create({ name: 'A' })).data;
    const dup = await topics.create({ name: 'A' });
    expect(dup.statusCode).toBe(409);
    expect(json(dup).error.code).toBe('CONFLICT');
    expect((await topics.create({ name: 'A', parent_id: a.id })).statusCode).toBe(201);
    const b = json(await topics.create({ name: 'B', parent_id: a.id })).data;
    const cycle = await topics.update(a.id, { parent_id: b.id });
    expect(cycle.statusCode).toBe(400);
    expect(json(cycle).error.details[0].field).toBe('parent_id');
    expect((await topics.update(a.id, { parent_id: a.id })).statusCode).toBe(400);
    expect((await topics.update(a.id, {})).statusCode).toBe(400);
    const missing = await topics.get(unknown);
    expect(missing.statusCode).toBe(404);
    expect(json(missing).error.code).toBe('TOPIC_NOT_FOUND');
    expect((await topics.get('not-a-uuid')).statusCode).toBe(404);
    expect((await topics.memories(unknown)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/topics' })).statusCode).toBe(401);
  });

  it("never shows or accepts another tenant's topics", async () => {
    const otherTenant = uniqueTenant('other');
    const other = topicsApi(t, await t.key({ tenant: otherTenant }));
    const mine = json(await topics.create({ name: 'Secret plans' })).data;
    expect((await other.get(mine.id)).statusCode).toBe(404);
    expect(json(await other.list()).pagination.total).toBe(0);
    expect(json(await other.list('include_hierarchy=true')).data).toEqual([]);
    expect((await other.update(mine.id, { name: 'pwned' })).statusCode).toBe(404);
    expect((await other.delete(mine.id)).statusCode).toBe(404);
    expect((await other.memories(mine.id)).statusCode).toBe(404);
    expect((await other.create({ name: 'child', parent_id: mine.id })).statusCode).toBe(400);
    const theirMemories = g1(t.app, await t.key({ tenant: otherTenant }));

    expect((await theirMemories.create({ title: 't', content: 'c', topic_id: mine.id })).statusCode).toBe(400);
    // Same name in another tenant is fine.
    expect((await other.create({ name: 'Secret plans' })).statusCode).toBe(201);
    expect(json(await topics.get(mine.id)).data.name).toBe('Secret plans');
  });
});
