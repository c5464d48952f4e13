import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { g9 } from './client.ts';

/** An error body without the parts that differ per request. */
const stable = (body: Json) => ({ ...body, error: { ...body.error, request_id: undefined, message: String(body.error.message).replace(/webhook_\w+/, '<id>') } });
const valid = { url: 'https://hooks.example.com/x', events: ['memory.created'] };

describe('G9 webhooks: security', () => {
  let t: TestApp;
  // Pending deliveries are counted over the whole store, which the tests of this file share: each test counts
  // only the deliveries queued since it started.
  let pendingAtStart = 0;
  const pendingSinceStart = async () => (await t.container.storage.webhooks.pendingCount()) - pendingAtStart;
  let aliceTenant: string, malloryTenant: string;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.freshTenant();
    pendingAtStart = await t.container.storage.webhooks.pendingCount();
    aliceTenant = uniqueTenant('alice');
    malloryTenant = uniqueTenant('mallory');
  });

  it('refuses a request without a usable key', async () => {
    const key = await t.key();
    for (const res of [
      await g9(t.app, undefined).list(),
      await g9(t.app, 'mnemo_live_not-a-real-key').create(valid),
      await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Basic ${key}` }, payload: valid }),
    ]) {
      expect(res.statusCode).toBe(401);
      expect(json(res)).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED', details: [] } });
    }
    expect((await g9(t.app, key).list()).statusCode).toBe(200);
  });

  it("never lists, reads, updates or deletes another tenant's or mode's webhooks: 404 like a missing id", async () => {
    const alice = g9(t.app, await t.key({ tenant: aliceTenant }));
    const mine = json(await alice.create(valid)).data;
    for (const other of [g9(t.app, await t.key({ tenant: malloryTenant })), g9(t.app, await t.key({ tenant: aliceTenant, mode: 'test' }))]) {
      expect(json(await other.list()).data.pagination.total).toBe(0);
      for (const [op, run] of [
        ['get', (id: string) => other.get(id)],
        ['update', (id: string) => other.update(id, { url: 'https://evil.example.com/', active: true })],
        ['delete', (id: string) => other.delete(id)],
      ] as const) {
        const theirs = await run(mine.id);
        const missing = await run('webhook_000000000000000000000000');
        expect(theirs.statusCode, op).toBe(404);
        expect(stable(json(theirs)), op).toEqual(stable(json(missing)));
      }
    }
    expect(json(await alice.get(mine.id)).data).toMatchObject({ url: valid.url, active: true });
  });

  it('keeps webhooks per workspace (X-Workspace-ID) and queues only that workspace\'s memory events', async () => {
    const key = await t.key();
    const ws1 = g9(t.app, key, { 'x-workspace-id': 'ws-1' });
    const id = json(await ws1.create(valid)).data.id;
    const fallback = g9(t.app, key);
    expect(json(await fallback.list()).data.pagination.total).toBe(0);
    expect((await fallback.get(id)).statusCode).toBe(404);
    expect((await g9(t.app, key, { 'x-workspace-id': 'ws-2' }).delete(id)).statusCode).toBe(404);
    expect(json(await ws1.list()).data.webhooks.map((w: Json) => w.id)).toEqual([id]);

    await g1(t.app, key, { 'x-workspace-id': 'ws-2' }).create({ title: 'elsewhere', content: 'x' });
    await g1(t.app, key).create({ title: 'default', content: 'x' });
    expect(await pendingSinceStart()).toBe(0);
    await g1(t.app, key, { 'x-workspace-id': 'ws-1' }).create({ title: 'here', content: 'x' });
    expect(await pendingSinceStart()).toBe(1);
  });

  it("never queues another tenant's memory events", async () => {
    await g9(t.app, await t.key({ tenant: aliceTenant })).create(valid);
    await g1(t.app, await t.key({ tenant: malloryTenant })).create({ title: 'm', content: 'x' });
    await g1(t.app, await t.key({ tenant: aliceTenant, mode: 'test' })).create({ title: 'm', content: 'x' });
    expect(await pendingSinceStart()).toBe(0);
  });

  it('shows the secret only in the create answer', async () => {
    const api = g9(t.app, await t.key());
    const created = json(await api.create(valid)).data;
    const texts = [
      (await api.list()).body, (await api.get(created.id)).body,
      (await api.update(created.id, { events: ['memory.updated'] })).body,
    ];
    for (const text of texts) {
      expect(text).not.toContain(created.secret);
      expect(text).not.toContain('"secret"');
    }
  });
});
