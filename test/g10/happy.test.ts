import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { GENERIC_EVENT_TYPES } from '../../src/core/events/event.types.ts';
import { createTestApp, json, type Json, type TestApp } from '../support/test-app.ts';
import { g10, GENERATED_SECRET, ISO, transfer } from './client.ts';

describe('G10 webhooks and events: happy paths', () => {
  let t: TestApp;
  // Pending deliveries are counted over the whole store, which the tests of this file share: each test counts
  // only the deliveries queued since it started.
  let pendingAtStart = 0;
  const pendingSinceStart = async () => (await t.container.storage.webhooks.pendingCount()) - pendingAtStart;
  let clock: ManualClock;
  let api: ReturnType<typeof g10>;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0));
    t = await createTestApp({ overrides: { clock } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 2, 1, 9, 0, 0)); // each test starts at the same time, as with an app of its own
    await t.freshTenant();
    pendingAtStart = await t.container.storage.webhooks.pendingCount();
    api = g10(t.app, await t.key({ tenant: t.tenant }));
  });

  const pending = () => pendingSinceStart();
  const eventsOf = (tenantId: string, mode: 'live' | 'test' = 'live') =>
    t.container.storage.events.readAfter({ tenantId, mode, workspace: null, afterSeq: 0, limit: 100, types: GENERIC_EVENT_TYPES });

  it('creates a webhook: id whk_, status active, a generated secret only in this answer', async () => {
    const res = await api.create({ url: 'https://pay.example.com/hooks', events: ['transfer.completed', 'transfer.failed', 'transfer.completed'], description: 'Payouts' });
    expect(res.statusCode).toBe(201);
    expect(json(res)).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^whk_[0-9A-Za-z]{24}$/),
        url: 'https://pay.example.com/hooks',
        events: ['transfer.completed', 'transfer.failed'],
        description: 'Payouts',
        secret: expect.stringMatching(GENERATED_SECRET),
        status: 'active',
        created_at: '2026-03-01T09:00:00.000Z',
        updated_at: '2026-03-01T09:00:00.000Z',
      },
    });
    const bare = json(await api.create({ url: 'https://pay.example.com/2', events: ['kyc.verified'] })).data;
    expect(bare.description).toBeNull();
  });

  it('lists (without secrets, with pagination) and gets webhooks', async () => {
    const created: Json[] = [];
    for (let i = 0; i < 3; i++) {
      created.push(json(await api.create({ url: `https://pay.example.com/${i}`, events: i === 1 ? ['wallet.created'] : ['payment.failed'] })).data);
      clock.advance(1000);
    }
    const res = await api.list('limit=2');
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(body.data.pagination).toEqual({ total: 3, limit: 2, offset: 0, has_more: true });
    expect(body.data.webhooks).toEqual(created.slice(0, 2).map(({ secret: _s, ...rest }) => rest));
    for (const w of body.data.webhooks) {
      expect(Object.keys(w).sort()).toEqual(['created_at', 'description', 'events', 'id', 'status', 'updated_at', 'url']);
      expect(w.updated_at).toMatch(ISO);
    }
    expect(json(await api.list('offset=2')).data.pagination).toEqual({ total: 3, limit: 20, offset: 2, has_more: false });
    expect(json(await api.list('event=wallet.created')).data.webhooks.map((w: Json) => w.id)).toEqual([created[1]!.id]);

    const { secret: _secret, ...withoutSecret } = created[0]!;
    const got = await api.get(created[0]!.id);
    expect(json(got)).toEqual({ success: true, data: withoutSecret });
    expect(got.body).not.toContain(created[0]!.secret);
  });

  it('patches events, description, url and status; failed can be resumed but not set', async () => {
    const id = json(await api.create({ url: 'https://pay.example.com/a', events: ['payment.successful'], description: 'first' })).data.id;
    clock.advance(2000);
    const res = await api.update(id, { events: ['payment.refunded'], description: null, url: 'https://pay.example.com/b' });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({
      success: true,
      data: {
        id, url: 'https://pay.example.com/b', events: ['payment.refunded'], description: null, status: 'active',
        created_at: '2026-03-01T09:00:00.000Z', updated_at: '2026-03-01T09:00:02.000Z',
      },
    });

    expect(json(await api.update(id, { status: 'disabled' })).data.status).toBe('disabled');
    expect(json(await api.update(id, { status: 'active' })).data.status).toBe('active');

    const failed = await api.update(id, { status: 'failed' });
    expect(failed.statusCode).toBe(400);
    expect(json(failed).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'status', message: 'must be one of: active, disabled' }] });

    // Deliveries mark a webhook failed after the 7th failed attempt; PATCH status active resumes it.
    const scope = { tenantId: t.tenant, mode: 'live' as const, workspace: null };
    await t.container.storage.webhooks.update(scope, 'g10', id, { status: 'failed' }, clock.now());
    expect(json(await api.get(id)).data.status).toBe('failed');
    expect(json(await api.update(id, { status: 'active' })).data.status).toBe('active');
    expect(json(await api.get(id)).data.status).toBe('active');
  });

  it('deletes a webhook', async () => {
    const id = json(await api.create({ url: 'https://pay.example.com/a', events: ['wallet.frozen'] })).data.id;
    const res = await api.delete(id);
    expect(json(res)).toEqual({ success: true, data: { id, deleted: true } });
    expect((await api.get(id)).statusCode).toBe(404);
    expect(json(await api.list()).data.pagination.total).toBe(0);
  });

  it('publishes an event and queues it for matching active webhooks only', async () => {
    await api.create({ url: 'https://pay.example.com/match', events: ['transfer.completed'] });
    await api.create({ url: 'https://pay.example.com/also', events: ['transfer.failed', 'transfer.completed'] });
    await api.create({ url: 'https://pay.example.com/other-type', events: ['transfer.failed'] });
    const off = json(await api.create({ url: 'https://pay.example.com/off', events: ['transfer.completed'] })).data.id;
    await api.update(off, { status: 'disabled' });
    const failed = json(await api.create({ url: 'https://pay.example.com/failed', events: ['transfer.completed'] })).data.id;
    await t.container.storage.webhooks.update({ tenantId: t.tenant, mode: 'live', workspace: null }, 'g10', failed, { status: 'failed' }, clock.now());

    const res = await api.publish({ type: 'transfer.completed', data: transfer });
    expect(res.statusCode).toBe(201);
    expect(json(res)).toEqual({
      success: true,
      data: { id: expect.stringMatching(/^evt_[0-9A-Za-z]+$/), type: 'transfer.completed', created_at: '2026-03-01T09:00:00.000Z', data: transfer },
    });
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await pending()).toBe(2);

    const events = await eventsOf(t.tenant);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: json(res).data.id, type: 'transfer.completed', data: transfer, scope: { tenantId: t.tenant, mode: 'live', workspace: null } });

    await api.publish({ type: 'kyc.submitted', data: {} });
    expect(await pending()).toBe(2);
  });

  it('answers a repeated Idempotency-Key with the first answer and publishes once', async () => {
    await api.create({ url: 'https://pay.example.com/match', events: ['payment.successful'] });
    const body = { type: 'payment.successful', data: { id: 'pay_1', amount: 5000, currency: 'USD' } };
    const first = await api.publish(body, { 'idempotency-key': 'order-42' });
    expect(first.statusCode).toBe(201);
    clock.advance(60_000);
    // The same body with its keys in another order is the same request.
    const again = await api.publish({ data: { currency: 'USD', amount: 5000, id: 'pay_1' }, type: 'payment.successful' }, { 'idempotency-key': 'order-42' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(json(again)).toEqual(json(first));
    expect(await eventsOf(t.tenant)).toHaveLength(1);
    expect(await pending()).toBe(1);

    const conflict = await api.publish({ ...body, data: { ...body.data, amount: 6000 } }, { 'idempotency-key': 'order-42' });
    expect(conflict.statusCode).toBe(409);
    expect(json(conflict).error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'Idempotency-Key' }] });

    // Another key is another request.
    const other = await api.publish(body, { 'idempotency-key': 'order-43' });
    expect(json(other).data.id).not.toBe(json(first).data.id);
    expect(await eventsOf(t.tenant)).toHaveLength(2);
  });

  it('publishes once when requests with one Idempotency-Key race', async () => {
    const body = { type: 'wallet.debited', data: { amount: 10 } };
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.publish(body, { 'idempotency-key': 'race' })));
    expect(new Set(answers.map((r) => json(r).data.id)).size).toBe(1);
    expect(answers.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(4);
    expect(await eventsOf(t.tenant)).toHaveLength(1);
  });

  it('keeps idempotency keys for 24 hours', async () => {
    const body = { type: 'wallet.credited', data: { amount: 1 } };
    const first = json(await api.publish(body, { 'idempotency-key': 'k1' })).data.id;
    clock.advance(24 * 3600_000 - 1);
    expect(json(await api.publish(body, { 'idempotency-key': 'k1' })).data.id).toBe(first);
    clock.advance(1);
    const later = await api.publish({ ...body, data: { amount: 2 } }, { 'idempotency-key': 'k1' });
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(json(later).data.id).not.toBe(first);
  });

  it('stores the idempotency record and the event in one transaction', async () => {
    const { idempotency, events } = t.container.storage;
    const ref = { tenantId: t.tenant, mode: 'live' as const, key: 'atomic' };
    const at = clock.now();
    const write = { requestHash: 'h1', response: '{}', at, notBefore: new Date(at.getTime() - 1000) };
    const [taken] = await events.append([{ id: 'evt_taken', type: 'wallet.created', scope: { tenantId: t.tenant, mode: 'live', workspace: null }, data: {}, createdAt: at }]);
    // The event cannot be stored (its id exists): the record must not be stored either.
    await expect(idempotency.appendEventOnce(ref, write, [{ ...taken!, seq: undefined } as never])).rejects.toThrow();
    const retry = await idempotency.appendEventOnce(ref, write, [{ id: 'evt_fresh', type: 'wallet.created', scope: { tenantId: t.tenant, mode: 'live', workspace: null }, data: {}, createdAt: at }]);
    expect(retry.kind).toBe('appended');
    const repeat = await idempotency.appendEventOnce(ref, write, [{ id: 'evt_third', type: 'wallet.created', scope: { tenantId: t.tenant, mode: 'live', workspace: null }, data: {}, createdAt: at }]);
    expect(repeat).toEqual({ kind: 'existing', record: { requestHash: 'h1', response: '{}', createdAt: at } });
    expect((await eventsOf(t.tenant)).map((e) => e.id)).toEqual(['evt_taken', 'evt_fresh']);
  });
});
