import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { g9, GENERATED_SECRET, ISO } from './client.ts';

describe('G9 webhooks: happy paths', () => {
  let t: TestApp;
  // Pending deliveries are counted over the whole store, which the tests of this file share: each test counts
  // only the deliveries queued since it started.
  let pendingAtStart = 0;
  const pendingSinceStart = async () => (await t.container.storage.webhooks.pendingCount()) - pendingAtStart;
  let clock: ManualClock;
  let key: string;
  let api: ReturnType<typeof g9>;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0));
    t = await createTestApp({ overrides: { clock } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 2, 1, 9, 0, 0)); // each test starts at the same time, as with an app of its own
    key = await t.freshTenant();
    pendingAtStart = await t.container.storage.webhooks.pendingCount();
    api = g9(t.app, key);
  });

  it('creates a webhook with every field and answers the whole resource, secret included', async () => {
    const res = await api.create({
      url: 'https://hooks.example.com/mnemo', events: ['memory.created', 'memory.deleted', 'memory.created'],
      secret: 'my-own-secret-0123456789', active: true,
      retry_policy: { max_attempts: 5, backoff_multiplier: 1.5, max_delay: 60 },
      filters: { tags: ['ops', 'deploy'], memory_type: 'project', priority: [1, 2], reviewed: true },
    });
    expect(res.statusCode).toBe(201);
    const body = json(res);
    expect(body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^webhook_[0-9A-Za-z]{24}$/),
        url: 'https://hooks.example.com/mnemo',
        events: ['memory.created', 'memory.deleted'],
        secret: 'my-own-secret-0123456789',
        active: true,
        retry_policy: { max_attempts: 5, backoff_multiplier: 1.5, max_delay: 60 },
        filters: { tags: ['ops', 'deploy'], memory_type: 'project', priority: [1, 2], reviewed: true },
        created_at: '2026-03-01T09:00:00.000Z',
        updated_at: '2026-03-01T09:00:00.000Z',
        last_delivery: null,
        delivery_stats: { total_attempts: 0, successful_deliveries: 0, failed_deliveries: 0 },
      },
    });
  });

  it('generates a whsec_ secret and applies the defaults', async () => {
    const data = json(await api.create({ url: 'http://hooks.example.com/a', events: ['search.performed'] })).data;
    expect(data.secret).toMatch(GENERATED_SECRET);
    expect(Buffer.from(data.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(data).toMatchObject({ active: true, retry_policy: { max_attempts: 3, backoff_multiplier: 2, max_delay: 300 }, filters: {} });
    const other = json(await api.create({ url: 'http://hooks.example.com/b', events: ['search.performed'], active: false })).data;
    expect(other.secret).not.toBe(data.secret);
    expect(other.active).toBe(false);
  });

  it('gets a webhook without its secret', async () => {
    const created = json(await api.create({ url: 'https://a.example.com/', events: ['memory.updated'], filters: { tags: 'x' } })).data;
    const res = await api.get(created.id);
    expect(res.statusCode).toBe(200);
    const { secret: _secret, ...rest } = created;
    expect(json(res)).toEqual({ success: true, data: rest });
    expect(res.body).not.toContain(created.secret);
  });

  it('lists without secret, retry_policy and filters, oldest first, with pagination', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(json(await api.create({ url: `https://h.example.com/${i}`, events: ['memory.created'], filters: { tags: 'a' } })).data.id);
      clock.advance(1000);
    }
    const res = await api.list('limit=2&offset=1');
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(body.success).toBe(true);
    expect(body.data.pagination).toEqual({ total: 5, limit: 2, offset: 1, has_more: true });
    expect(body.data.webhooks.map((w: Json) => w.id)).toEqual(ids.slice(1, 3));
    for (const w of body.data.webhooks) {
      expect(Object.keys(w).sort()).toEqual(['active', 'created_at', 'delivery_stats', 'events', 'id', 'last_delivery', 'updated_at', 'url']);
      expect(w.created_at).toMatch(ISO);
    }
    const last = json(await api.list('limit=2&offset=4')).data;
    expect(last.pagination).toEqual({ total: 5, limit: 2, offset: 4, has_more: false });
    expect(last.webhooks).toHaveLength(1);
    const defaults = json(await api.list()).data.pagination;
    expect(defaults).toEqual({ total: 5, limit: 20, offset: 0, has_more: false });
  });

  it('filters the list by active and by event', async () => {
    const a = json(await api.create({ url: 'https://h.example.com/a', events: ['memory.created', 'memory.updated'] })).data.id;
    const b = json(await api.create({ url: 'https://h.example.com/b', events: ['memory.deleted'], active: false })).data.id;
    const c = json(await api.create({ url: 'https://h.example.com/c', events: ['memory.updated'] })).data.id;
    const ids = async (q: string) => json(await api.list(q)).data.webhooks.map((w: Json) => w.id);
    expect(await ids('active=true')).toEqual([a, c]);
    expect(await ids('active=false')).toEqual([b]);
    expect(await ids('event=memory.updated')).toEqual([a, c]);
    expect(await ids('event=memory.updated&active=true&limit=1&offset=1')).toEqual([c]);
    expect(json(await api.list('event=memory.deleted&active=true')).data).toEqual({
      webhooks: [], pagination: { total: 0, limit: 20, offset: 0, has_more: false },
    });
  });

  it('updates events, active and retry_policy (keeping the policy fields left out), and url and filters', async () => {
    const created = json(await api.create({
      url: 'https://h.example.com/a', events: ['memory.created'], retry_policy: { max_attempts: 4, max_delay: 100 }, filters: { tags: 'a' },
    })).data;
    clock.advance(5000);
    const res = await api.update(created.id, { events: ['memory.deleted', 'memory.updated'], active: false, retry_policy: { backoff_multiplier: 3 } });
    expect(res.statusCode).toBe(200);
    const updated = json(res);
    expect(updated).toEqual({
      success: true,
      data: {
        ...created, secret: undefined,
        events: ['memory.deleted', 'memory.updated'], active: false,
        retry_policy: { max_attempts: 4, backoff_multiplier: 3, max_delay: 100 },
        updated_at: '2026-03-01T09:00:05.000Z',
      },
    });
    expect(updated.data).not.toHaveProperty('secret');
    const more = json(await api.update(created.id, { url: 'https://other.example.com/x', filters: {}, active: true })).data;
    expect(more).toMatchObject({ url: 'https://other.example.com/x', filters: {}, active: true, events: ['memory.deleted', 'memory.updated'] });
    expect(json(await api.get(created.id)).data).toEqual(more);
  });

  it('deletes a webhook', async () => {
    const id = json(await api.create({ url: 'https://h.example.com/a', events: ['memory.created'] })).data.id;
    const res = await api.delete(id);
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ success: true, data: { id, deleted: true } });
    expect((await api.get(id)).statusCode).toBe(404);
    expect((await api.delete(id)).statusCode).toBe(404);
    expect(json(await api.list()).data.pagination.total).toBe(0);
  });

  it('queues deliveries for active webhooks whose filters match, and none for inactive ones', async () => {
    const memories = g1(t.app, key);
    await api.create({ url: 'https://h.example.com/ops', events: ['memory.created'], filters: { tags: 'ops' } });
    const disabled = json(await api.create({ url: 'https://h.example.com/off', events: ['memory.created'], active: false })).data.id;
    const pending = () => pendingSinceStart();

    await memories.create({ title: 'no tags', content: 'x' });
    expect(await pending()).toBe(0);
    await memories.create({ title: 'ops', content: 'x', tags: ['ops'] });
    expect(await pending()).toBe(1);

    await api.update(disabled, { active: true });
    await memories.create({ title: 'dev', content: 'x', tags: ['dev'] });
    expect(await pending()).toBe(2);
  });
});
