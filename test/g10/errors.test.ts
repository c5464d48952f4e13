import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { GENERIC_EVENT_TYPES } from '../../src/core/events/event.types.ts';
import { createTestApp, json, type Json, type TestApp } from '../support/test-app.ts';
import { g10, transfer } from './client.ts';

const fields = (body: Json) => (body.error.details as Json[]).map((d) => d.field);
const valid = { url: 'https://pay.example.com/hooks', events: ['transfer.completed'] };

describe('G10 webhooks and events: errors', () => {
  let t: TestApp;
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
    api = g10(t.app, await t.key({ tenant: t.tenant }));
  });

  it('names bad urls, unknown events (memory events included) and long descriptions', async () => {
    const res = await api.create({ url: 'http://192.168.0.1/x', events: ['transfer.completed', 'memory.created'], description: 'd'.repeat(1001) });
    expect(res.statusCode).toBe(400);
    const body = json(res);
    expect(body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: expect.any(Array), request_id: expect.any(String) } });
    expect(fields(body).sort()).toEqual(['description', 'events[1]', 'url']);
    expect(fields(json(await api.create({ ...valid, url: 'gopher://x/' })))).toEqual(['url']);
    expect(fields(json(await api.create({ ...valid, events: [] })))).toEqual(['events']);
    expect(fields(json(await api.create({ url: valid.url })))).toEqual(['events']);
  });

  it('checks patches and refuses an empty one', async () => {
    const id = json(await api.create(valid)).data.id;
    expect(fields(json(await api.update(id, {})))).toEqual(['body']);
    expect(fields(json(await api.update(id, { events: ['kyc.nope'] })))).toEqual(['events[0]']);
    expect(fields(json(await api.update(id, { status: 'paused' })))).toEqual(['status']);
    expect(fields(json(await api.update(id, { url: 'http://[fe80::1]/' })))).toEqual(['url']);
    expect(json(await api.get(id)).data).toMatchObject({ url: valid.url, status: 'active', events: valid.events });
  });

  it('refuses IPv6 spellings that carry a loopback or private IPv4 address, at creation and on PATCH', async () => {
    const id = json(await api.create(valid)).data.id;
    for (const url of ['http://[::127.0.0.1]/x', 'http://[64:ff9b::a00:1]/x', 'http://[2002:c0a8:101::1]/x', 'http://[2001:0:808:808::80ff:fffe]/x']) {
      const created = json(await api.create({ ...valid, url }));
      expect(created.error.details, url).toEqual([{ field: 'url', message: expect.stringMatching(/carries .* (loopback|private) address/) }]);
      expect(json(await api.update(id, { url })).error.details, url).toEqual([{ field: 'url', message: expect.stringMatching(/carries/) }]);
    }
    expect(json(await api.list()).data.webhooks).toMatchObject([{ id, url: valid.url }]);
  });

  it('answers WEBHOOK_NOT_FOUND for unknown ids, NOT_FOUND for unknown paths and METHOD_NOT_ALLOWED for other methods', async () => {
    for (const res of [await api.get('whk_nope'), await api.update('whk_nope', { status: 'disabled' }), await api.delete('whk_nope')]) {
      expect(res.statusCode).toBe(404);
      expect(json(res)).toMatchObject({ success: false, error: { code: 'WEBHOOK_NOT_FOUND', details: [] } });
    }
    const res = await t.app.inject({ method: 'GET', url: '/v1/webhooks/a/b', headers: { 'x-api-key': 'x' } });
    expect(res.statusCode).toBe(404);
    expect(json(res).error.code).toBe('NOT_FOUND');
    const wrongMethod = await t.app.inject({ method: 'GET', url: '/v1/events' });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
    expect(json(wrongMethod).error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('allows 10 creations per hour per key, then 429 RATE_LIMITED', async () => {
    for (let i = 0; i < 10; i++) expect((await api.create(valid)).statusCode).toBe(201);
    const res = await api.create(valid);
    expect(res.statusCode).toBe(429);
    expect(json(res).error.code).toBe('RATE_LIMITED');
    expect(res.headers['retry-after']).toBe('3600');
    clock.advance(3600_000);
    expect((await api.create(valid)).statusCode).toBe(201);
  });

  it('refuses unknown event types and non-object data', async () => {
    for (const [body, field] of [
      [{ type: 'memory.created', data: {} }, 'type'],
      [{ type: 'transfer.done', data: transfer }, 'type'],
      [{ type: 'transfer.completed', data: [transfer] }, 'data'],
      [{ type: 'transfer.completed', data: 'x' }, 'data'],
      [{ type: 'transfer.completed' }, 'data'],
      [{ data: {} }, 'type'],
    ] as const) {
      const res = await api.publish(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
      expect(fields(json(res))).toEqual([field]);
    }
    const events = await t.container.storage.events.readAfter({ tenantId: t.tenant, mode: 'live', workspace: null, afterSeq: 0, limit: 10, types: GENERIC_EVENT_TYPES });
    expect(events).toEqual([]);
  });

  it('refuses data over 64 KiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const ok = await api.publish({ type: 'kyc.submitted', data: { blob: 'x'.repeat(64 * 1024 - 20) } });
    expect(ok.statusCode).toBe(201);
    const res = await api.publish({ type: 'kyc.submitted', data: { blob: 'x'.repeat(64 * 1024) } });
    expect(res.statusCode).toBe(413);
    expect(json(res).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: [{ field: 'data' }] });
    const huge = await api.publish({ type: 'kyc.submitted', data: { blob: 'x'.repeat(1024 * 1024) } });
    expect(huge.statusCode).toBe(413);
    expect(json(huge).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses a malformed Idempotency-Key', async () => {
    const res = await api.publish({ type: 'kyc.verified', data: {} }, { 'idempotency-key': 'k'.repeat(256) });
    expect(res.statusCode).toBe(400);
    expect(fields(json(res))).toEqual(['Idempotency-Key']);
    expect((await api.publish({ type: 'kyc.verified', data: {} }, { 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(201);
  });

  it('answers 415 and malformed JSON in the G10 envelope', async () => {
    const key = await t.key();
    const wrongType = await t.app.inject({ method: 'POST', url: '/v1/events', headers: { 'x-api-key': key, 'content-type': 'text/plain' }, payload: 'hi' });
    expect(wrongType.statusCode).toBe(415);
    expect(json(wrongType).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const broken = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: '{' });
    expect(broken.statusCode).toBe(400);
    expect(json(broken).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body' }] });
  });

  it('requires memories:write to publish and change, memories:read to read', async () => {
    const reader = g10(t.app, await t.key({ tenant: t.tenant, scopes: ['memories:read'] }));
    const writer = g10(t.app, await t.key({ tenant: t.tenant, scopes: ['memories:write'] }));
    const id = json(await api.create(valid)).data.id;
    for (const res of [
      await reader.publish({ type: 'kyc.verified', data: {} }), await reader.create(valid), await reader.update(id, { status: 'disabled' }),
      await reader.delete(id), await writer.list(), await writer.get(id),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(json(res).error.code).toBe('PERMISSION_DENIED');
    }
    expect((await writer.publish({ type: 'kyc.verified', data: {} })).statusCode).toBe(201);
    expect((await reader.get(id)).statusCode).toBe(200);
  });
});
