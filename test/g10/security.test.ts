import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { g10, transfer } from './client.ts';

const stable = (body: Json) => ({ ...body, error: { ...body.error, request_id: undefined, message: String(body.error.message).replace(/whk_\w+/, '<id>') } });
const valid = { url: 'https://pay.example.com/hooks', events: ['transfer.completed'] };

describe('G10 webhooks and events: security', () => {
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

  it('refuses a request without a usable key, naming both accepted headers', async () => {
    for (const [method, url, payload] of [['GET', '/v1/webhooks', undefined], ['POST', '/v1/webhooks', valid], ['POST', '/v1/events', { type: 'kyc.verified', data: {} }]] as const) {
      const none = await t.app.inject({ method, url, ...(payload ? { payload } : {}) });
      expect(none.statusCode, url).toBe(401);
      expect(json(none).error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/X-API-Key.*Authorization: Bearer/), details: [] });
      const bad = await t.app.inject({ method, url, headers: { 'x-api-key': 'mnemo_live_forged' }, ...(payload ? { payload } : {}) });
      expect(bad.statusCode).toBe(401);
    }
  });

  it("never lists, reads, changes or deletes another tenant's or mode's webhooks: 404 like a missing id", async () => {
    const alice = g10(t.app, await t.key({ tenant: aliceTenant }));
    const mine = json(await alice.create(valid)).data;
    for (const other of [g10(t.app, await t.key({ tenant: malloryTenant })), g10(t.app, await t.key({ tenant: aliceTenant, mode: 'test' }))]) {
      expect(json(await other.list()).data.pagination.total).toBe(0);
      for (const [op, run] of [
        ['get', (id: string) => other.get(id)],
        ['patch', (id: string) => other.update(id, { url: 'https://evil.example.com/', status: 'disabled' })],
        ['delete', (id: string) => other.delete(id)],
      ] as const) {
        const theirs = await run(mine.id);
        const missing = await run('whk_000000000000000000000000');
        expect(theirs.statusCode, op).toBe(404);
        expect(stable(json(theirs)), op).toEqual(stable(json(missing)));
      }
    }
    expect(json(await alice.get(mine.id)).data).toMatchObject({ url: valid.url, status: 'active' });
  });

  it("never queues one tenant's (or mode's) events for another's webhooks", async () => {
    await g10(t.app, await t.key({ tenant: aliceTenant })).create(valid);
    const mallory = g10(t.app, await t.key({ tenant: malloryTenant }));
    expect((await mallory.publish({ type: 'transfer.completed', data: transfer })).statusCode).toBe(201);
    expect((await g10(t.app, await t.key({ tenant: aliceTenant, mode: 'test' })).publish({ type: 'transfer.completed', data: transfer })).statusCode).toBe(201);
    expect(await pendingSinceStart()).toBe(0);
    await g10(t.app, await t.key({ tenant: aliceTenant })).publish({ type: 'transfer.completed', data: transfer });
    expect(await pendingSinceStart()).toBe(1);
  });

  it('keeps G9 and G10 webhooks apart', async () => {
    const key = await t.key();
    const g10Hook = json(await g10(t.app, key).create(valid)).data.id;
    const g9Hook = json(await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}` }, payload: { url: valid.url, events: ['memory.created'] } })).data.id;
    expect((await g10(t.app, key).get(g9Hook)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${g10Hook}`, headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(404);
    expect(json(await g10(t.app, key).list()).data.webhooks.map((w: Json) => w.id)).toEqual([g10Hook]);
  });

  it('keeps idempotency keys per tenant', async () => {
    const body = { type: 'transfer.completed', data: transfer };
    const a = await g10(t.app, await t.key({ tenant: aliceTenant })).publish(body, { 'idempotency-key': 'same' });
    const m = await g10(t.app, await t.key({ tenant: malloryTenant })).publish({ ...body, data: { other: true } }, { 'idempotency-key': 'same' });
    expect(m.statusCode).toBe(201);
    expect(m.headers['idempotent-replayed']).toBeUndefined();
    expect(json(m).data.id).not.toBe(json(a).data.id);
    expect(json(m).data.data).toEqual({ other: true });
  });

  it('shows the secret only in the create answer', async () => {
    const api = g10(t.app, await t.key());
    const created = json(await api.create(valid)).data;
    for (const text of [(await api.list()).body, (await api.get(created.id)).body, (await api.update(created.id, { status: 'disabled' })).body]) {
      expect(text).not.toContain(created.secret);
      expect(text).not.toContain('"secret"');
    }
  });
});
