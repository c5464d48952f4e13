import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS } from '../../src/core/api-keys/api-key.types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { g11, g11Keys } from './client.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const start = Date.UTC(2026, 5, 1, 12);

describe('G11 API keys', () => {
  let t: TestApp;
  const clock = new ManualClock(start);
  beforeAll(async () => { t = await createTestApp({ overrides: { clock } }); });
  afterAll(() => t.close());

  const idOf = async (key: string) => (await t.container.apiKeys.authenticate(key)).keyId;
  const later = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
  /** A G1 memory write and read with `key`: the status codes (201 and 200 when the key works with both scopes). */
  const memoryStatuses = async (key: string) => {
    const m = g1(t.app, key);
    return [(await m.create({ title: 'managed', content: 'hello from a managed key' })).statusCode, (await m.list()).statusCode];
  };
  const status = async (key: string) => (await g11Keys(t.app, key).list()).statusCode;

  describe('happy paths', () => {
    it('creates a key that works at once on a memory surface and on G11, its text shown in that answer only', async () => {
      const admin = g11Keys(t.app, await t.freshTenant());
      const expiresAt = later(30 * DAY);
      const res = await admin.create({ name: 'CI deploys', scopes: ['memories:read', 'memories:write', 'secrets:read'], tier: 'pro', expiresAt });
      expect(res.statusCode, res.body).toBe(201);
      const body = json(res);
      expect(body).toEqual({
        id: expect.stringMatching(/^key_[A-Za-z0-9]{20}$/), name: 'CI deploys', prefix: body.key.slice(0, 15),
        scopes: ['memories:read', 'memories:write', 'secrets:read'], tier: 'pro', mode: 'live',
        createdAt: new Date(clock.now()).toISOString(), expiresAt, revokedAt: null, replacedBy: null,
        key: expect.stringMatching(/^mnemo_live_[0-9A-Za-z]{36}$/),
      });
      expect(res.headers['x-ratelimit-limit']).toBe('100000');
      // The new key works on a memory surface and on G11, within its scopes.
      expect(await memoryStatuses(body.key)).toEqual([201, 200]);
      expect((await g11(t.app, body.key).list()).statusCode).toBe(200);
      expect((await g11(t.app, body.key).create({ name: 'x', value: 'y' })).statusCode).toBe(403);
      expect(await status(body.key)).toBe(403);
      // Reads never show the key again.
      const read = await admin.get(body.id);
      expect(read.statusCode).toBe(200);
      const { key: _key, ...record } = body;
      expect(json(read)).toEqual(record);
    });

    it("defaults scopes and tier to the caller's own and the expiry to never (for a caller that never expires)", async () => {
      const caller = await t.freshTenant({ tier: 'pro', scopes: ['apikeys:manage', 'memories:read'] });
      const res = await g11Keys(t.app, caller).create({ name: 'Defaults' });
      expect(res.statusCode, res.body).toBe(201);
      expect(json(res)).toMatchObject({ scopes: ['apikeys:manage', 'memories:read'], tier: 'pro', mode: 'live', expiresAt: null });
    });

    it('lists the keys of the tenant and mode, oldest first, a page at a time, never with their text', async () => {
      const caller = await t.freshTenant();
      const keys = g11Keys(t.app, caller);
      const made: string[] = [await idOf(caller)];
      for (const name of ['one', 'two', 'three']) {
        clock.advance(1000);
        made.push(json(await keys.create({ name })).id);
      }
      const first = await keys.list('limit=3');
      expect(first.statusCode).toBe(200);
      expect(json(first).data.map((k: Json) => k.id)).toEqual(made.slice(0, 3));
      expect(json(first).pagination).toEqual({ cursor: expect.any(String), hasMore: true, totalCount: 4 });
      for (const k of json(first).data) expect(k).not.toHaveProperty('key');
      const second = json(await keys.list(`limit=3&cursor=${encodeURIComponent(json(first).pagination.cursor)}`));
      expect(second.data.map((k: Json) => k.name)).toEqual(['three']);
      expect(second.pagination).toEqual({ cursor: null, hasMore: false, totalCount: 4 });
      expect(json(await keys.list()).data).toHaveLength(4);
    });

    it('renames a key and replaces its scopes, which apply from its very next request', async () => {
      const admin = g11Keys(t.app, await t.freshTenant());
      const made = json(await admin.create({ name: 'Worker', scopes: ['memories:read', 'memories:write'] }));
      expect(await memoryStatuses(made.key)).toEqual([201, 200]);

      const narrowed = await admin.update(made.id, { scopes: ['memories:read'] });
      expect(narrowed.statusCode, narrowed.body).toBe(200);
      expect(json(narrowed)).toMatchObject({ id: made.id, name: 'Worker', scopes: ['memories:read'] });
      expect(json(narrowed)).not.toHaveProperty('key');
      expect(await memoryStatuses(made.key)).toEqual([403, 200]);

      const renamed = json(await admin.update(made.id, { name: '  Read-only worker ' }));
      expect(renamed).toMatchObject({ name: 'Read-only worker', scopes: ['memories:read'] });
      const widened = json(await admin.update(made.id, { name: 'Worker', scopes: ['memories:write', 'memories:read', 'memories:write'] }));
      expect(widened).toMatchObject({ name: 'Worker', scopes: ['memories:write', 'memories:read'] });
      expect(await memoryStatuses(made.key)).toEqual([201, 200]);
      expect(json(await admin.get(made.id))).toEqual(widened);
    });

    it('revokes a key: its very next request is 401, on every surface; the record stays with revokedAt', async () => {
      const admin = g11Keys(t.app, await t.freshTenant());
      const made = json(await admin.create({ name: 'Short-lived' }));
      expect(await memoryStatuses(made.key)).toEqual([201, 200]);
      clock.advance(5000);
      const revoked = await admin.revoke(made.id);
      expect(revoked.statusCode).toBe(204);
      expect(revoked.body).toBe('');
      expect(await memoryStatuses(made.key)).toEqual([401, 401]);
      expect(await status(made.key)).toBe(401);
      expect(json(await admin.get(made.id))).toMatchObject({ revokedAt: new Date(clock.now()).toISOString() });
    });

    it('lets a key revoke itself: the request succeeds and the next one is 401', async () => {
      const caller = await t.freshTenant();
      const keys = g11Keys(t.app, caller);
      expect((await keys.revoke(await idOf(caller))).statusCode).toBe(204);
      const next = await keys.list();
      expect(next.statusCode).toBe(401);
      expect(json(next).error).toMatchObject({ code: 'AUTHENTICATION_REQUIRED', details: { reason: 'invalid_api_key' } });
    });

    it('rotates a key: a new key with the same name, scopes, tier and expiry; the old one works for 24 h, then 401', async () => {
      const admin = g11Keys(t.app, await t.freshTenant());
      const old = json(await admin.create({ name: 'Rotating', scopes: ['memories:read', 'memories:write'], tier: 'free', expiresAt: later(90 * DAY) }));
      clock.advance(1000);
      const rotatedAt = clock.now().getTime();
      const res = await admin.rotate(old.id);
      expect(res.statusCode, res.body).toBe(201);
      const fresh = json(res);
      expect(fresh).toEqual({
        id: expect.stringMatching(/^key_/), name: 'Rotating', prefix: fresh.key.slice(0, 15), scopes: ['memories:read', 'memories:write'],
        tier: 'free', mode: 'live', createdAt: new Date(rotatedAt).toISOString(), expiresAt: old.expiresAt, revokedAt: null, replacedBy: null,
        key: expect.stringMatching(/^mnemo_live_/),
      });
      expect(fresh.id).not.toBe(old.id);
      expect(fresh.key).not.toBe(old.key);
      expect(json(await admin.get(old.id))).toMatchObject({ replacedBy: fresh.id, expiresAt: new Date(rotatedAt + DAY).toISOString() });

      clock.set(rotatedAt + DAY - 1);
      expect(await memoryStatuses(old.key)).toEqual([201, 200]);
      expect(await memoryStatuses(fresh.key)).toEqual([201, 200]);
      clock.set(rotatedAt + DAY);
      expect(await memoryStatuses(old.key)).toEqual([401, 401]);
      expect(await memoryStatuses(fresh.key)).toEqual([201, 200]);
    });

    it('rotates with gracePeriodSeconds 0 (the old key stops at once) or a chosen grace, never past the old expiry', async () => {
      const admin = g11Keys(t.app, await t.freshTenant());
      const now = json(await admin.create({ name: 'Now' }));
      const rotated = await admin.rotate(now.id, { gracePeriodSeconds: 0 });
      expect(rotated.statusCode).toBe(201);
      expect(await status(now.key)).toBe(401);
      expect(await memoryStatuses(json(rotated).key)).toEqual([201, 200]);
      expect(json(await admin.get(now.id))).toMatchObject({ expiresAt: new Date(clock.now()).toISOString(), replacedBy: json(rotated).id });

      const hour = json(await admin.create({ name: 'Hour' }));
      expect((await admin.rotate(hour.id, { gracePeriodSeconds: 3600 })).statusCode).toBe(201);
      expect(json(await admin.get(hour.id)).expiresAt).toBe(later(HOUR));

      // The old key expires in 10 minutes: a day of grace does not lengthen its life.
      const soon = json(await admin.create({ name: 'Soon', expiresAt: later(600_000) }));
      const soonRotated = json(await admin.rotate(soon.id, {}));
      expect(json(await admin.get(soon.id)).expiresAt).toBe(soon.expiresAt);
      expect(soonRotated.expiresAt).toBe(soon.expiresAt);
    });
  });

  describe('errors', () => {
    const fields = (res: { json: () => unknown }) => ((res.json() as Json).error.details.fields as { field: string }[]).map((f) => f.field).join(' ');

    it('answers bad create bodies with 400 VALIDATION_ERROR naming the field, and creates nothing', async () => {
      const keys = g11Keys(t.app, await t.freshTenant());
      for (const [body, field] of [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'x'.repeat(101) }, 'name'],
        [{ name: 'tab\there' }, 'name'],
        [{ name: 42 }, 'name'],
        [{ name: 'ok', scopes: [] }, 'scopes'],
        [{ name: 'ok', scopes: ['root'] }, 'scopes[0]'],
        [{ name: 'ok', scopes: 'memories:read' }, 'scopes'],
        [{ name: 'ok', tier: 'platinum' }, 'tier'],
        [{ name: 'ok', expiresAt: 'tomorrow' }, 'expiresAt'],
        [{ name: 'ok', expiresAt: '2026-06-01' }, 'expiresAt'],
        [{ name: 'ok', expiresAt: new Date(clock.now().getTime() - 1000).toISOString() }, 'expiresAt'],
        [{ name: 'ok', expiresAt: new Date(clock.now()).toISOString() }, 'expiresAt'],
        [{ name: 'ok', mode: 'test' }, 'mode'],
        [{ name: 'ok', tenantId: 'someone-else' }, 'tenantId'],
      ] as const) {
        const res = await keys.create(body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(json(res).error.code).toBe('VALIDATION_ERROR');
        expect(fields(res), JSON.stringify(body)).toContain(field);
      }
      expect(json(await keys.list()).pagination.totalCount).toBe(1);
    });

    it('answers bad updates, rotations and list queries with 400 VALIDATION_ERROR', async () => {
      const keys = g11Keys(t.app, await t.freshTenant());
      const made = json(await keys.create({ name: 'Target', scopes: ['memories:read'] }));
      for (const [body, field] of [
        [{}, 'body'], [{ name: '' }, 'name'], [{ scopes: [] }, 'scopes'], [{ scopes: ['nope'] }, 'scopes[0]'], [{ tier: 'free' }, 'tier'],
      ] as const) {
        const res = await keys.update(made.id, body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(fields(res), JSON.stringify(body)).toContain(field);
      }
      for (const grace of [-1, 1.5, '60', 30 * 86_400 + 1]) {
        const res = await keys.rotate(made.id, { gracePeriodSeconds: grace });
        expect(res.statusCode, String(grace)).toBe(400);
        expect(fields(res)).toContain('gracePeriodSeconds');
      }
      for (const query of ['limit=0', 'limit=101', 'cursor=bm9wZQ']) {
        const res = await keys.list(query);
        expect(res.statusCode, query).toBe(400);
        expect(json(res).error.code).toBe('VALIDATION_ERROR');
      }
      expect(json(await keys.get(made.id))).toMatchObject({ name: 'Target', scopes: ['memories:read'], replacedBy: null });
    });

    it('answers an unknown key id with 404 RESOURCE_NOT_FOUND', async () => {
      const keys = g11Keys(t.app, await t.freshTenant());
      for (const res of [await keys.get('key_nope'), await keys.update('key_nope', { name: 'x' }), await keys.revoke('key_nope'), await keys.rotate('key_nope')]) {
        expect(res.statusCode).toBe(404);
        expect(json(res)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: 'API key "key_nope" not found', details: {} } });
      }
    });

    it('answers 409 CONFLICT for a revoked key (update, revoke, rotate) and for rotating a rotated or expired key', async () => {
      const keys = g11Keys(t.app, await t.freshTenant());
      const revoked = json(await keys.create({ name: 'Revoked' }));
      await keys.revoke(revoked.id);
      for (const res of [await keys.update(revoked.id, { name: 'x' }), await keys.revoke(revoked.id), await keys.rotate(revoked.id)]) {
        expect(res.statusCode).toBe(409);
        expect(json(res).error.code).toBe('CONFLICT');
        expect(json(res).error.message).toContain(`API key ${revoked.id} is revoked`);
      }
      const rotated = json(await keys.create({ name: 'Rotated' }));
      const successor = json(await keys.rotate(rotated.id));
      const again = await keys.rotate(rotated.id);
      expect(again.statusCode).toBe(409);
      expect(json(again)).toEqual({ error: {
        code: 'CONFLICT', message: `API key ${rotated.id} was already rotated into ${successor.id}: only a live key can be rotated`, details: {},
      } });
      // Its replacement is the one to rotate next; the old one, still in its grace period, may yet be revoked.
      expect((await keys.rotate(successor.id)).statusCode).toBe(201);
      expect((await keys.revoke(rotated.id)).statusCode).toBe(204);

      // Two rotations of one key at once: one new key, never two.
      const raced = json(await keys.create({ name: 'Raced' }));
      const outcomes = await Promise.all([keys.rotate(raced.id), keys.rotate(raced.id), keys.rotate(raced.id)]);
      expect(outcomes.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
      const winner = json(outcomes.find((r) => r.statusCode === 201)!);
      expect(json(await keys.get(raced.id)).replacedBy).toBe(winner.id);
      expect(json(await keys.list('limit=100')).data.filter((k: Json) => k.name === 'Raced')).toHaveLength(2);

      const expiring = json(await keys.create({ name: 'Expiring', expiresAt: later(1000) }));
      clock.advance(1000);
      const expired = await keys.rotate(expiring.id);
      expect(expired.statusCode).toBe(409);
      expect(json(expired).error.message).toContain('has expired');
    });
  });

  describe('security', () => {
    const denied = (res: { statusCode: number; json: () => unknown }, field?: string) => {
      expect(res.statusCode, JSON.stringify(res.json())).toBe(403);
      expect((res.json() as Json).error).toMatchObject({ code: 'PERMISSION_DENIED', details: field ? { field } : {} });
    };

    it('refuses every endpoint without a usable key (401) or without apikeys:manage (403)', async () => {
      const tenant = uniqueTenant('keys-guard');
      const target = await idOf(await t.key({ tenant }));
      const calls = (k: ReturnType<typeof g11Keys>) => [
        k.create({ name: 'x' }), k.list(), k.get(target), k.update(target, { name: 'x' }), k.revoke(target), k.rotate(target),
      ];
      for (const key of [undefined, 'mnemo_live_forged']) {
        for (const res of await Promise.all(calls(g11Keys(t.app, key)))) {
          expect(res.statusCode).toBe(401);
          expect(json(res).error.code).toBe('AUTHENTICATION_REQUIRED');
        }
      }
      const others = ALL_PERMISSIONS.filter((s) => s !== 'apikeys:manage');
      for (const res of await Promise.all(calls(g11Keys(t.app, await t.key({ tenant, scopes: others }))))) {
        expect(res.statusCode).toBe(403);
        expect(json(res)).toEqual({ error: {
          code: 'PERMISSION_DENIED', message: 'This API key lacks the apikeys:manage scope', details: { requiredScope: 'apikeys:manage' },
        } });
      }
      expect(await t.container.storage.apiKeys.list(tenant)).toHaveLength(2);
      expect((await t.container.storage.apiKeys.findById(target))).toMatchObject({ name: 'API key', revokedAt: null, replacedBy: null });
    });

    it("answers another tenant's or mode's key id exactly like a missing one, and leaves it alone", async () => {
      const tenant = uniqueTenant('alice');
      const alice = g11Keys(t.app, await t.key({ tenant }));
      const victim = json(await alice.create({ name: 'Alice prod' }));
      const mallory = g11Keys(t.app, await t.key({ tenant: uniqueTenant('mallory') }));
      const sandbox = g11Keys(t.app, await t.key({ tenant, mode: 'test' }));
      for (const other of [mallory, sandbox]) {
        for (const res of [await other.get(victim.id), await other.update(victim.id, { name: 'pwned' }), await other.revoke(victim.id), await other.rotate(victim.id)]) {
          expect(res.statusCode).toBe(404);
          expect(json(res)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: `API key "${victim.id}" not found`, details: {} } });
        }
        expect(json(await other.list()).data.map((k: Json) => k.id)).not.toContain(victim.id);
        expect(json(await other.list()).pagination.totalCount).toBe(1);
      }
      expect(json(await alice.get(victim.id))).toMatchObject({ name: 'Alice prod', revokedAt: null, replacedBy: null });
      expect(await memoryStatuses(victim.key)).toEqual([201, 200]);
    });

    it('makes a test-mode key manage test-mode keys only, which act on the sandbox data set', async () => {
      const tenant = uniqueTenant('sandboxed');
      const liveKey = await t.key({ tenant });
      const testKey = await t.key({ tenant, mode: 'test' });
      await g11(t.app, liveKey).create({ name: 'token', value: 'live-value' });
      await g11(t.app, testKey).create({ name: 'token', value: 'test-value' });
      const made = json(await g11Keys(t.app, testKey).create({ name: 'Sandbox CI' }));
      expect(made).toMatchObject({ mode: 'test', key: expect.stringMatching(/^mnemo_test_/), prefix: expect.stringMatching(/^mnemo_test_/) });
      expect(json(await g11(t.app, made.key).get('token')).value).toBe('test-value');
      const rotated = json(await g11Keys(t.app, testKey).rotate(made.id));
      expect(rotated).toMatchObject({ mode: 'test', key: expect.stringMatching(/^mnemo_test_/) });
      expect(json(await g11(t.app, rotated.key).get('token')).value).toBe('test-value');
      // The live key does not see the sandbox's keys, and the other way round.
      expect((await g11Keys(t.app, liveKey).get(made.id)).statusCode).toBe(404);
      expect((await g11Keys(t.app, testKey).get(await idOf(liveKey))).statusCode).toBe(404);
    });

    it('refuses to grant a scope or a tier the caller lacks (403 PERMISSION_DENIED), and to manage a stronger key', async () => {
      const tenant = uniqueTenant('escalation');
      const strong = await t.key({ tenant });
      const strongId = await idOf(strong);
      const weak = g11Keys(t.app, await t.key({ tenant, tier: 'pro', scopes: ['apikeys:manage', 'memories:read'] }));
      denied(await weak.create({ name: 'Escalate', scopes: ['apikeys:manage', 'secrets:read'] }), 'scopes');
      denied(await weak.create({ name: 'Escalate', tier: 'enterprise' }), 'tier');
      const lesser = await weak.create({ name: 'Lesser', scopes: ['memories:read'], tier: 'free' });
      expect(lesser.statusCode).toBe(201);
      denied(await weak.update(json(lesser).id, { scopes: ['memories:read', 'memories:write'] }), 'scopes');
      expect((await weak.update(json(lesser).id, { name: 'Still lesser' })).statusCode).toBe(200);
      // A key it could not have made is out of its reach, except to read.
      expect((await weak.get(strongId)).statusCode).toBe(200);
      for (const res of [await weak.update(strongId, { name: 'mine' }), await weak.update(strongId, { scopes: ['memories:read'] }), await weak.revoke(strongId), await weak.rotate(strongId)]) {
        denied(res);
        expect(json(res).error.message).toContain(`cannot manage ${strongId}`);
      }
      expect(json(await g11Keys(t.app, strong).get(strongId))).toMatchObject({ name: 'API key', revokedAt: null, replacedBy: null });
      expect(await status(strong)).toBe(200);
    });

    it('never makes a key that outlives the caller', async () => {
      const tenant = uniqueTenant('mortal');
      const callerExpiry = new Date(clock.now().getTime() + HOUR);
      const { key } = await t.container.apiKeys.create({ tenantId: tenant, userId: 'u', tier: 'enterprise', mode: 'live', expiresAt: callerExpiry });
      const mortal = g11Keys(t.app, key);
      expect(json(await mortal.create({ name: 'Inherits' }))).toMatchObject({ expiresAt: callerExpiry.toISOString() });
      denied(await mortal.create({ name: 'Forever', expiresAt: null }), 'expiresAt');
      denied(await mortal.create({ name: 'Longer', expiresAt: later(2 * HOUR) }), 'expiresAt');
      expect((await mortal.create({ name: 'Shorter', expiresAt: later(HOUR / 2) })).statusCode).toBe(201);
      // Rotating a key that never expires would hand out a key outliving the caller.
      const forever = await idOf(await t.key({ tenant }));
      denied(await mortal.rotate(forever), 'expiresAt');
    });

    it('stores no key text: no row of any table holds a key made by create or rotate', async () => {
      const keys = g11Keys(t.app, await t.freshTenant());
      const made = json(await keys.create({ name: 'Secret text' }));
      const rotated = json(await keys.rotate(made.id, { gracePeriodSeconds: 60 }));
      const rows: string[] = [];
      for (const table of TRANSFER_TABLES) rows.push(JSON.stringify(await t.container.storage.transfer.dump(table, null, 1_000_000)));
      const dump = rows.join('\n');
      expect(dump).toContain(made.id);
      expect(dump).toContain(rotated.id);
      for (const text of [made.key, rotated.key]) {
        expect(dump.includes(text)).toBe(false);
        // Nor any long part of it beyond the display prefix.
        expect(dump.includes(text.slice(15, 35))).toBe(false);
      }
    });
  });
});
