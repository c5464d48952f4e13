import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyMnemoSignature } from '../../src/client/webhook-receiver.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { SECURITY_EVENT_TYPES } from '../../src/core/events/event.types.ts';
import { createTestApp, json, type Json, type TestApp } from '../support/test-app.ts';
import { startReceiver, waitFor, type Receiver } from '../webhooks/support.ts';
import { g11, g11Audit, g11Hooks, g11Keys, ISO } from './client.ts';

/**
 * G11 webhooks (`/v1/security/webhooks`): managed over HTTP, fed by the secret service (`secret.created`,
 * `secret.accessed`) and API-key management (`apikey.rotated`), delivered by the same worker as G9 and G10 to a real
 * receiver on loopback, signed as G10 deliveries are. On both stores (MNEMO_TEST_STORE=postgres for PostgreSQL).
 */

const GENERATED_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const WEBHOOK_ID = /^whk_[0-9A-Za-z]{24}$/;
const LOOPBACK = { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '2000' };
/** Any key with every scope (the default) may manage webhooks and subscribe to every event. */
const ALL_EVENTS = [...SECURITY_EVENT_TYPES];

interface Delivered { id: string; type: string; created_at: string; data: Json }
const bodiesOf = (receiver: Receiver): Delivered[] => receiver.received.map((r) => JSON.parse(r.body) as Delivered);

describe('G11 webhooks: management', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
  beforeAll(async () => { t = await createTestApp({ overrides: { clock } }); });
  afterAll(() => t.close());

  it('registers a webhook: whk_ id, active, a generated secret shown in this answer only', async () => {
    const hooks = g11Hooks(t.app, await t.freshTenant());
    const res = await hooks.create({ url: 'https://vault.example.com/hooks', events: ['secret.created', 'apikey.rotated', 'secret.created'] });
    expect(res.statusCode, res.body).toBe(201);
    const created = json(res);
    expect(created).toEqual({
      id: expect.stringMatching(WEBHOOK_ID), url: 'https://vault.example.com/hooks', events: ['secret.created', 'apikey.rotated'],
      status: 'active', createdAt: '2026-07-01T12:00:00.000Z', updatedAt: '2026-07-01T12:00:00.000Z', lastDeliveryAt: null,
      deliveryStats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 }, secret: expect.stringMatching(GENERATED_SECRET),
    });
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const { secret: _secret, ...shown } = created;
    expect(json(await hooks.get(created.id))).toEqual(shown);
  });

  it('keeps a signing secret the caller chose (16-256 printable characters)', async () => {
    const hooks = g11Hooks(t.app, await t.freshTenant());
    const secret = 'my-own-signing-secret-0123456789';
    const res = await hooks.create({ url: 'https://vault.example.com/own', events: ['secret.accessed'], secret });
    expect(res.statusCode, res.body).toBe(201);
    expect(json(res).secret).toBe(secret);
  });

  it('lists oldest first, a page at a time (no secrets), filtered by event', async () => {
    const hooks = g11Hooks(t.app, await t.freshTenant());
    const ids: string[] = [];
    for (const [i, events] of [['secret.created'], ['apikey.rotated'], ['secret.accessed', 'apikey.rotated']].entries()) {
      ids.push(json(await hooks.create({ url: `https://vault.example.com/${i}`, events })).id);
      clock.advance(1000);
    }
    const first = await hooks.list('limit=2');
    expect(first.statusCode).toBe(200);
    const page = json(first);
    expect(page.data.map((w: Json) => w.id)).toEqual(ids.slice(0, 2));
    expect(page.data[0]).not.toHaveProperty('secret');
    expect(page.pagination).toEqual({ cursor: expect.any(String), hasMore: true, totalCount: 3 });
    const second = json(await hooks.list(`limit=2&cursor=${encodeURIComponent(page.pagination.cursor)}`));
    expect(second.data.map((w: Json) => w.id)).toEqual([ids[2]]);
    expect(second.pagination).toEqual({ cursor: null, hasMore: false, totalCount: 3 });
    expect(json(await hooks.list('event=apikey.rotated')).data.map((w: Json) => w.id)).toEqual(ids.slice(1));
  });

  it('changes url, events and status with PUT, and deletes', async () => {
    const hooks = g11Hooks(t.app, await t.freshTenant());
    const { id, createdAt } = json(await hooks.create({ url: 'https://vault.example.com/a', events: ['secret.created'] }));
    clock.advance(5000);
    const changed = await hooks.update(id, { url: 'https://vault.example.com/b', events: ['secret.accessed'], status: 'disabled' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(json(changed)).toMatchObject({ id, url: 'https://vault.example.com/b', events: ['secret.accessed'], status: 'disabled', updatedAt: new Date(Date.parse(createdAt) + 5000).toISOString() });
    expect(json(changed)).not.toHaveProperty('secret');
    expect(json(await hooks.update(id, { status: 'active' }))).toMatchObject({ status: 'active', events: ['secret.accessed'] });
    const deleted = await hooks.delete(id);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await hooks.get(id)).statusCode).toBe(404);
  });

  it('records every call in the audit log as webhook.*', async () => {
    const key = await t.freshTenant();
    const hooks = g11Hooks(t.app, key);
    const { id } = json(await hooks.create({ url: 'https://vault.example.com/audited', events: ['secret.created'] }));
    await hooks.list();
    await hooks.get(id);
    await hooks.update(id, { status: 'disabled' });
    await hooks.delete(id);
    await hooks.get('whk_missing');
    const rows = json(await g11Audit(t.app, key).list('action=webhook.*&limit=10')).data as Json[];
    expect(rows.map((r) => [r.action, r.resource, r.status]).reverse()).toEqual([
      ['webhook.create', 'webhook', 201], ['webhook.list', 'webhook:*', 200], ['webhook.read', `webhook:${id}`, 200],
      ['webhook.update', `webhook:${id}`, 200], ['webhook.delete', `webhook:${id}`, 204], ['webhook.read', 'webhook:whk_missing', 404],
    ]);
    expect(rows.at(-1)!.metadata).toEqual({ webhookId: id });
  });
});

describe('G11 webhooks: deliveries to a real receiver', () => {
  let t: TestApp;
  let receiver: Receiver;
  // Offline: constructing the client and verifying signatures make no network call.
  const stripe = new Stripe('sk_test_x');
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await createTestApp({ env: LOOPBACK });
    t.container.deliveries.start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  afterEach(() => { receiver.received.length = 0; });

  /** Verifies a delivery as a receiver would, twice: with Stripe's verifier (independent) and with the helper. */
  function verify(index: number, secret: string): Delivered {
    const r = receiver.received[index]!;
    const header = r.headers['x-service-signature']!;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const t0 = Number(/^t=(\d+)/.exec(header)![1]);
    expect(header).toBe(`t=${t0},v1=${createHmac('sha256', secret).update(`${t0}.${r.body}`).digest('hex')}`);
    expect(stripe.webhooks.constructEvent(r.body, header, secret, 300)).toMatchObject({ id: expect.stringMatching(/^evt_/) });
    expect(verifyMnemoSignature({ payload: r.body, header, secret })).toBe(true);
    expect(() => verifyMnemoSignature({ payload: r.body, header, secret: 'whsec_another' })).toThrow(/signature/);
    expect(r.headers).toMatchObject({
      'content-type': 'application/json', 'user-agent': 'Mnemo-Webhooks/1.0', 'x-service-delivery': expect.stringMatching(/^dlv_/),
    });
    expect(r.headers['webhook-signature']).toBeUndefined();
    const body = JSON.parse(r.body) as Delivered;
    expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(r.headers['x-service-event']).toBe(body.type);
    return body;
  }

  it('delivers secret.created, secret.accessed and apikey.rotated, signed t=…,v1=…, without values or keys', async () => {
    const key = await t.freshTenant({ user: 'ops-lead' });
    const registered = await g11Hooks(t.app, key).create({ url: `${receiver.url}/vault`, events: ALL_EVENTS });
    expect(registered.statusCode, registered.body).toBe(201);
    const { id: hookId, secret } = json(registered);

    const VALUE = 'sk_live_MARKER_value_5f1c';
    const created = json(await g11(t.app, key).create({ name: 'stripe-key', value: VALUE, tags: ['payments'] }));
    await waitFor(() => receiver.received.length === 1);
    const onCreate = verify(0, secret);
    expect(onCreate).toEqual({
      id: expect.stringMatching(/^evt_/), type: 'secret.created', created_at: created.createdAt,
      data: { id: created.id, name: 'stripe-key', version: 1, tags: ['payments'], expiresAt: null, createdAt: created.createdAt, createdBy: 'ops-lead' },
    });

    // Every read of a value: the newest version and an older one.
    await g11(t.app, key).update('stripe-key', { value: `${VALUE}-v2` });
    expect(json(await g11(t.app, key).get('stripe-key')).value).toBe(`${VALUE}-v2`);
    expect(json(await g11(t.app, key).get('stripe-key', 'version=1')).value).toBe(VALUE);
    await waitFor(() => receiver.received.length === 3);
    const reads = [verify(1, secret), verify(2, secret)].sort((a, b) => b.data.version - a.data.version);
    expect(reads.map((b) => b.type)).toEqual(['secret.accessed', 'secret.accessed']);
    expect(reads[0]!.data).toEqual({
      id: created.id, name: 'stripe-key', version: 2, tags: ['payments'], accessedBy: 'ops-lead', accessedVia: 'api', accessedAt: reads[0]!.created_at,
    });
    expect(reads[1]!.data).toMatchObject({ version: 1, accessedBy: 'ops-lead' });
    // A list shows no value: it is no access.
    await g11(t.app, key).list();

    const keys = g11Keys(t.app, key);
    const made = json(await keys.create({ name: 'CI deploys' }));
    const rotated = await keys.rotate(made.id, { gracePeriodSeconds: 3600 });
    expect(rotated.statusCode, rotated.body).toBe(201);
    const replacement = json(rotated);
    await waitFor(() => receiver.received.length === 4);
    const onRotate = verify(3, secret);
    expect(onRotate).toEqual({
      id: expect.stringMatching(/^evt_/), type: 'apikey.rotated', created_at: expect.stringMatching(ISO),
      data: {
        id: made.id, replacedBy: replacement.id, name: 'CI deploys', userId: 'ops-lead',
        graceEndsAt: json(await keys.get(made.id)).expiresAt, rotatedBy: 'ops-lead', rotatedAt: onRotate.created_at,
      },
    });

    // No body holds a value, a key, or a key's first characters.
    const all = receiver.received.map((r) => r.body).join('\n');
    for (const marker of [VALUE, 'MARKER', made.key, replacement.key, key, made.prefix, replacement.prefix]) expect(all).not.toContain(marker);
    // Each event once; the webhook counts them.
    expect(new Set(bodiesOf(receiver).map((b) => b.id)).size).toBe(4);
    await waitFor(async () => json(await g11Hooks(t.app, key).get(hookId)).deliveryStats.successfulDeliveries === 4);
  });

  it('delivers only the events a webhook subscribes to', async () => {
    const key = await t.freshTenant();
    const { secret } = json(await g11Hooks(t.app, key).create({ url: `${receiver.url}/reads`, events: ['secret.accessed'] }));
    await g11(t.app, key).create({ name: 'quiet', value: 'not announced' });
    await g11(t.app, key).get('quiet');
    await waitFor(() => receiver.received.length === 1);
    // The create (first in the log) was not queued: the read, after it, is the only delivery.
    expect(verify(0, secret)).toMatchObject({ type: 'secret.accessed', data: { name: 'quiet' } });
    await waitFor(async () => (await t.container.storage.webhooks.pendingCount()) === 0);
    expect(receiver.received).toHaveLength(1);
  });
});

describe('G11 webhooks: retries on G10\'s schedule', () => {
  let t: TestApp;
  let receiver: Receiver;
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
  beforeAll(async () => {
    receiver = await startReceiver((_q, res) => { res.statusCode = 503; res.end('down'); });
    t = await createTestApp({ env: LOOPBACK, overrides: { clock } });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('retries after 1 min, 5 min, 30 min, 2 h, 8 h and 24 h, then fails the webhook; PUT status active resumes it', async () => {
    const key = await t.freshTenant();
    const hooks = g11Hooks(t.app, key);
    const { id } = json(await hooks.create({ url: receiver.url, events: ['secret.created'] }));
    await g11(t.app, key).create({ name: 'flaky', value: 'x' });
    expect(await t.container.deliveries.tick()).toBe(1);
    const MIN = 60_000;
    for (const delay of [1 * MIN, 5 * MIN, 30 * MIN, 120 * MIN, 480 * MIN, 1440 * MIN]) {
      clock.advance(delay - 1000);
      expect(await t.container.deliveries.tick()).toBe(0);
      clock.advance(1000);
      expect(await t.container.deliveries.tick()).toBe(1);
    }
    expect(receiver.received).toHaveLength(7);
    expect(new Set(bodiesOf(receiver).map((b) => b.id)).size).toBe(1);
    expect(json(await hooks.get(id))).toMatchObject({ status: 'failed', deliveryStats: { totalAttempts: 7, successfulDeliveries: 0, failedDeliveries: 1 } });

    // Failed: nothing is queued for it; back to active, new events are delivered again.
    await g11(t.app, key).create({ name: 'ignored', value: 'x' });
    expect(await t.container.deliveries.tick()).toBe(0);
    receiver.respondWith((_q, res) => { res.end(); });
    expect(json(await hooks.update(id, { status: 'active' })).status).toBe('active');
    await g11(t.app, key).create({ name: 'after', value: 'x' });
    expect(await t.container.deliveries.tick()).toBe(1);
    expect(bodiesOf(receiver).at(-1)).toMatchObject({ type: 'secret.created', data: { name: 'after' } });
    expect(json(await hooks.get(id))).toMatchObject({ status: 'active', deliveryStats: { successfulDeliveries: 1 } });
  });
});

describe('G11 webhooks: errors', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());

  const fieldsOf = (body: Json): string[] => (body.error.details.fields as { field: string }[]).map((f) => f.field);

  it('names bad urls, unknown or empty events and a bad secret, all at once', async () => {
    const hooks = g11Hooks(t.app, await t.freshTenant());
    const res = await hooks.create({ url: 'http://10.0.0.7/hook', events: ['secret.created', 'memory.created', 'transfer.completed'], secret: 'short' });
    expect(res.statusCode).toBe(400);
    expect(json(res).error).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(fieldsOf(json(res)).sort()).toEqual(['events[1]', 'events[2]', 'secret', 'url']);
    for (const url of ['ftp://vault.example.com/x', 'https://user:pw@vault.example.com/x', 'not a url', 'http://localhost/x', 'http://[::1]/x']) {
      const bad = await hooks.create({ url, events: ['secret.created'] });
      expect(bad.statusCode, url).toBe(400);
      expect(fieldsOf(json(bad)), url).toEqual(['url']);
    }
    for (const body of [{ url: 'https://vault.example.com/x', events: [] }, { url: 'https://vault.example.com/x' }, { events: ['secret.created'] }]) {
      const bad = await hooks.create(body);
      expect(bad.statusCode, JSON.stringify(body)).toBe(400);
      expect(json(bad).error.code).toBe('VALIDATION_ERROR');
    }
    const spaced = await hooks.create({ url: 'https://vault.example.com/x', events: ['secret.created'], secret: 'has spaces in it, sixteen+' });
    expect(fieldsOf(json(spaced))).toEqual(['secret']);
  });

  it('refuses fields G11 webhooks do not have, and an empty or bad PUT', async () => {
    const hooks = g11Hooks(t.app, await t.freshTenant());
    for (const extra of [{ description: 'x' }, { retry_policy: { max_attempts: 2 } }, { filters: {} }, { active: false }, { tenantId: 'other' }]) {
      const res = await hooks.create({ url: 'https://vault.example.com/x', events: ['secret.created'], ...extra });
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
    }
    const { id } = json(await hooks.create({ url: 'https://vault.example.com/x', events: ['secret.created'] }));
    expect(fieldsOf(json(await hooks.update(id, {})))).toEqual(['body']);
    expect((await hooks.update(id, { status: 'failed' })).statusCode).toBe(400);
    expect((await hooks.update(id, { secret: 'a-new-secret-0123456789' })).statusCode).toBe(400);
    expect(fieldsOf(json(await hooks.update(id, { events: ['memory.deleted'] })))).toEqual(['events[0]']);
    // An unknown id is a 404 even when the body is bad too.
    expect((await hooks.update('whk_missing', { events: ['memory.deleted'] })).statusCode).toBe(404);
  });

  it('answers 404 RESOURCE_NOT_FOUND for an unknown id, 400 for a bad cursor or event filter', async () => {
    const hooks = g11Hooks(t.app, await t.freshTenant());
    for (const res of [await hooks.get('whk_nope'), await hooks.update('whk_nope', { status: 'disabled' }), await hooks.delete('whk_nope')]) {
      expect(res.statusCode).toBe(404);
      expect(json(res).error).toEqual({ code: 'RESOURCE_NOT_FOUND', message: 'No webhook with id whk_nope', details: {} });
    }
    expect(fieldsOf(json(await hooks.list('cursor=bm9wZQ')))).toEqual(['cursor']);
    expect(fieldsOf(json(await hooks.list('event=transfer.completed')))).toEqual(['event']);
  });

  it('needs a key, JSON, and the right scopes', async () => {
    const none = await g11Hooks(t.app, undefined).list();
    expect(none.statusCode).toBe(401);
    expect(json(none).error).toMatchObject({ code: 'AUTHENTICATION_REQUIRED', details: { reason: 'missing_api_key' } });
    const key = await t.freshTenant();
    const text = await t.app.inject({ method: 'POST', url: '/v1/security/webhooks', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, payload: 'url=x' });
    expect(text.statusCode).toBe(415);
    expect(json(text).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');

    const reader = g11Hooks(t.app, await t.key({ scopes: ['secrets:read'] }));
    expect((await reader.list()).statusCode).toBe(200);
    const refused = await reader.create({ url: 'https://vault.example.com/x', events: ['secret.created'] });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'PERMISSION_DENIED', details: { requiredScope: 'secrets:write' } });
    const writerOnly = g11Hooks(t.app, await t.key({ scopes: ['secrets:write'] }));
    expect(json(await writerOnly.list()).error.details).toEqual({ requiredScope: 'secrets:read' });

    // Each event needs what it reveals: secret events secrets:read, rotations apikeys:manage.
    const writer = g11Hooks(t.app, await t.key({ scopes: ['secrets:read', 'secrets:write'] }));
    const rotations = await writer.create({ url: 'https://vault.example.com/x', events: ['secret.created', 'apikey.rotated'] });
    expect(rotations.statusCode).toBe(403);
    expect(json(rotations).error).toMatchObject({ code: 'PERMISSION_DENIED', details: { requiredScope: 'apikeys:manage', field: 'events' } });
    expect(json(await writerOnly.create({ url: 'https://vault.example.com/x', events: ['secret.accessed'] })).error.details)
      .toEqual({ requiredScope: 'secrets:read', field: 'events' });
    const { id } = json(await writer.create({ url: 'https://vault.example.com/x', events: ['secret.created'] }));
    expect((await writer.update(id, { events: ['apikey.rotated'] })).statusCode).toBe(403);
    expect((await writer.update(id, { status: 'disabled' })).statusCode).toBe(200);
  });

  it('allows 10 creations per hour per key, shared with G9 and G10, then 429 RATE_LIMIT_EXCEEDED', async () => {
    const key = await t.freshTenant();
    const hooks = g11Hooks(t.app, key);
    for (let i = 0; i < 5; i++) {
      const g10 = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: `https://pay.example.com/${i}`, events: ['transfer.completed'] } });
      expect(g10.statusCode).toBe(201);
    }
    for (let i = 0; i < 5; i++) expect((await hooks.create({ url: `https://vault.example.com/${i}`, events: ['secret.created'] })).statusCode).toBe(201);
    // An invalid request is not counted, and is answered as such.
    expect((await hooks.create({ url: 'https://vault.example.com/x', events: ['nope'] })).statusCode).toBe(400);
    const limited = await hooks.create({ url: 'https://vault.example.com/11', events: ['secret.created'] });
    expect(limited.statusCode).toBe(429);
    expect(json(limited).error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 10, remaining: 0 } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('G10 webhooks cannot subscribe to G11 events, and the G8 stream does not offer them', async () => {
    const key = await t.freshTenant();
    const g10 = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: 'https://pay.example.com/x', events: ['secret.created'] } });
    expect(g10.statusCode).toBe(400);
    const g9 = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}` }, payload: { url: 'https://pay.example.com/x', events: ['apikey.rotated'] } });
    expect(g9.statusCode).toBe(400);
    const stream = await t.app.inject({ method: 'GET', url: '/api/v1/stream?events=secret.accessed', headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
    expect(stream.statusCode).toBe(400);
  });
});

describe('G11 webhooks: security', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await createTestApp({ env: LOOPBACK });
    t.container.deliveries.start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it("never sends another tenant's or mode's secret and key events to my webhook", async () => {
    const mine = await t.freshTenant();
    const myTenant = t.tenant;
    const sandbox = await t.key({ tenant: myTenant, mode: 'test' });
    await g11Hooks(t.app, mine).create({ url: `${receiver.url}/mine`, events: ALL_EVENTS });
    const theirs = await t.freshTenant();
    // Another tenant with a webhook of its own on the same receiver: its events reach only that one.
    await g11Hooks(t.app, theirs).create({ url: `${receiver.url}/theirs`, events: ['secret.created'] });
    for (const key of [theirs, sandbox]) {
      await g11(t.app, key).create({ name: 'shared-name', value: 'OTHER_TENANT_VALUE' });
      await g11(t.app, key).get('shared-name');
      const made = json(await g11Keys(t.app, key).create({ name: 'other' }));
      expect((await g11Keys(t.app, key).rotate(made.id)).statusCode).toBe(201);
    }
    // Then mine: it arrives, and is all that arrived at my URL.
    await g11(t.app, mine).create({ name: 'mine-only', value: 'MY_VALUE' });
    await waitFor(() => receiver.received.some((r) => r.url === '/mine'));
    await waitFor(async () => (await t.container.storage.webhooks.pendingCount()) === 0);
    const toMine = receiver.received.filter((r) => r.url === '/mine').map((r) => JSON.parse(r.body) as Delivered);
    expect(toMine.map((b) => [b.type, b.data.name])).toEqual([['secret.created', 'mine-only']]);
    expect(receiver.received.filter((r) => r.url === '/theirs').map((r) => (JSON.parse(r.body) as Delivered).data.name)).toEqual(['shared-name']);
    expect(receiver.received.map((r) => r.body).join('\n')).not.toMatch(/OTHER_TENANT_VALUE|MY_VALUE/);
  });

  it("answers another tenant's or mode's webhook id exactly like a missing one", async () => {
    const owner = await t.freshTenant();
    const { id } = json(await g11Hooks(t.app, owner).create({ url: 'https://vault.example.com/x', events: ['secret.created'] }));
    const sandbox = await t.key({ tenant: t.tenant, mode: 'test' });
    const stranger = await t.freshTenant();
    for (const key of [stranger, sandbox]) {
      const other = g11Hooks(t.app, key);
      for (const res of [await other.get(id), await other.update(id, { status: 'disabled' }), await other.delete(id)]) {
        expect(res.statusCode).toBe(404);
        expect(json(res).error).toEqual({ code: 'RESOURCE_NOT_FOUND', message: `No webhook with id ${id}`, details: {} });
      }
      expect(json(await other.list()).pagination.totalCount).toBe(0);
    }
    expect(json(await g11Hooks(t.app, owner).get(id))).toMatchObject({ id, status: 'active' });
  });

  it('keeps G11 webhooks apart from G10 ones with the same tenant and mode', async () => {
    const key = await t.freshTenant();
    const g10Id = json(await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: 'https://pay.example.com/x', events: ['transfer.completed'] } })).data.id as string;
    const { id } = json(await g11Hooks(t.app, key).create({ url: 'https://vault.example.com/x', events: ['secret.created'] }));
    expect((await g11Hooks(t.app, key).get(g10Id)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: { 'x-api-key': key } })).statusCode).toBe(404);
    expect(json(await g11Hooks(t.app, key).list()).data.map((w: Json) => w.id)).toEqual([id]);
  });
});
