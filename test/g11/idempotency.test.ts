import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { IDEMPOTENT_REQUEST_LOCK_MS, IDEMPOTENT_REQUEST_TTL_MS } from '../../src/core/idempotency/idempotent-request.service.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { createTestApp, json, type Json, type TestApp } from '../support/test-app.ts';
import { openTestPostgresStorage, testStoreKind } from '../support/test-store.ts';
import { g11, g11Audit, g11Keys } from './client.ts';
import { idempotencyHooks } from '../../src/surfaces/g11-security/idempotency.ts';

/**
 * G11 `Idempotency-Key` on every POST and PUT: the same key and request replay the first answer without running it
 * again; another request with the key is 422; a repeat while the first runs is 409; answers are kept 24 hours,
 * sealed, per API key. On SQLite, and on PostgreSQL with MNEMO_TEST_STORE=postgres.
 */

const idem = (key: string) => ({ 'idempotency-key': key });
/** What a client compares between an answer and its replay. */
const answerOf = (res: LightMyRequestResponse) => ({ status: res.statusCode, body: res.body, type: res.headers['content-type'] });

/** A promise and the function that settles it: a handler held at a point of the test's choosing. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => { open = resolve; });
  return { opened, open };
}

describe('G11 Idempotency-Key', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  beforeAll(async () => { t = await createTestApp({ overrides: { clock } }); });
  afterAll(() => t.close());
  const versionsOf = async (key: string, name: string) => json(await g11(t.app, key).get(name)).version as number;

  it('replays a created secret for the same key and body (any key order): same answer, marked, nothing created twice', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    const first = await s.create({ name: 'db-password', value: 'hunter2', tags: ['db'] }, idem('create-1'));
    expect(first.statusCode, first.body).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    clock.advance(5_000);
    const again = await s.create({ tags: ['db'], value: 'hunter2', name: 'db-password' }, idem('create-1'));
    expect(answerOf(again)).toEqual(answerOf(first));
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The limits count the replay like any request, and its request id is its own.
    expect(Number(again.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    const listed = json(await s.list());
    expect(listed.pagination.totalCount).toBe(1);
    expect(listed.data[0]).toMatchObject({ name: 'db-password', version: 1 });

    // Both are in the audit log, the replay marked as one; the chain still verifies.
    const rows = json(await g11Audit(t.app, key).list('action=secret.create')).data;
    expect(rows.map((r: Json) => [r.status, r.outcome, r.metadata])).toEqual([
      [201, 'success', { replayed: true }], [201, 'success', { version: 1 }],
    ]);
    expect(await t.container.audit.verify({ tenantId: t.tenant, mode: 'live' })).toMatchObject({ ok: true, broken: [] });
  });

  it('replays a PUT without writing a second version', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'token', value: 'v1' });
    const first = await s.update('token', { value: 'v2' }, idem('put-1'));
    expect(json(first)).toMatchObject({ version: 2, value: 'v2' });
    for (let i = 0; i < 3; i++) {
      const again = await s.update('token', { value: 'v2' }, idem('put-1'));
      expect(answerOf(again)).toEqual(answerOf(first));
      expect(again.headers['idempotent-replayed']).toBe('true');
    }
    expect(await versionsOf(key, 'token')).toBe(2);
    // Another key is another request.
    expect(json(await s.update('token', { value: 'v2' }, idem('put-2'))).version).toBe(3);
  });

  it('replays an API key creation and a rotation: the same key text, no second key', async () => {
    const admin = await t.freshTenant();
    const k = g11Keys(t.app, admin);
    const post = (url: string, body?: object) => t.app.inject({
      method: 'POST', url, headers: { authorization: `Bearer ${admin}`, ...idem(`key-op ${url}`) }, ...(body ? { payload: body } : {}),
    });
    const created = await post('/v1/security/api-keys', { name: 'ci', scopes: ['secrets:read'] });
    expect(created.statusCode, created.body).toBe(201);
    const again = await post('/v1/security/api-keys', { scopes: ['secrets:read'], name: 'ci' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(json(again).key).toBe(json(created).key);
    expect(json(await k.list()).pagination.totalCount).toBe(2);

    // A bare rotation (no body) and its replay.
    const rotated = await post(`/v1/security/api-keys/${json(created).id}/rotate`);
    expect(rotated.statusCode, rotated.body).toBe(201);
    const rotatedAgain = await post(`/v1/security/api-keys/${json(created).id}/rotate`);
    expect(answerOf(rotatedAgain)).toEqual(answerOf(rotated));
    expect(json(await k.list()).pagination.totalCount).toBe(3);
  });

  it('replays an audit-log export with its headers, as it was', async () => {
    const key = await t.freshTenant();
    await g11(t.app, key).create({ name: 'one', value: 'v' });
    const exportCsv = () => t.app.inject({
      method: 'POST', url: '/v1/security/audit-logs/export', headers: { authorization: `Bearer ${key}`, ...idem('export-1') },
      payload: { format: 'csv', limit: 1 },
    });
    const first = await exportCsv();
    expect(first.statusCode).toBe(200);
    await g11(t.app, key).list();
    const again = await exportCsv();
    expect(answerOf(again)).toEqual(answerOf(first));
    for (const h of ['content-disposition', 'x-total-count', 'x-next-cursor']) expect(again.headers[h], h).toBe(first.headers[h]);
    expect(again.headers['content-type']).toBe('text/csv; charset=utf-8');
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the key with another body, path or X-Region, and runs nothing', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'a', value: 'v1' });
    await s.create({ name: 'b', value: 'v1' });
    expect((await s.update('a', { value: 'v2' }, idem('k'))).statusCode).toBe(200);
    for (const res of [
      await s.update('a', { value: 'other' }, idem('k')),
      await s.update('a', { value: 'v2', tags: [] }, idem('k')),
      await s.update('b', { value: 'v2' }, idem('k')),
      await s.update('a', { value: 'v2' }, { ...idem('k'), 'x-region': 'eu-west-1' }),
      await s.create({ name: 'a', value: 'v2' }, idem('k')),
    ]) {
      expect(res.statusCode, res.body).toBe(422);
      expect(json(res)).toEqual({
        error: { code: 'IDEMPOTENCY_KEY_REUSED', message: 'This Idempotency-Key was already used for a different request', details: { field: 'Idempotency-Key' } },
      });
    }
    // Each refusal is recorded.
    const statuses = json(await g11Audit(t.app, key).list('action=secret.*&limit=6')).data.map((r: Json) => r.status);
    expect(statuses).toEqual([422, 422, 422, 422, 422, 200]);
    expect(await versionsOf(key, 'a')).toBe(2);
    expect(await versionsOf(key, 'b')).toBe(1);
  });

  it('runs one of two concurrent requests with a new key; the other gets 409 CONFLICT while it runs', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    const held = gate();
    const reached = gate();
    const real = t.container.secrets.create;
    t.container.secrets.create = async (...args) => {
      reached.open();
      await held.opened;
      return real(...args);
    };
    try {
      const first = s.create({ name: 'racy', value: 'v' }, idem('race'));
      await reached.opened;
      const second = await s.create({ name: 'racy', value: 'v' }, idem('race'));
      expect(second.statusCode, second.body).toBe(409);
      expect(json(second).error).toEqual({
        code: 'CONFLICT', message: 'A request with this Idempotency-Key is in progress; retry once it has been answered', details: { field: 'Idempotency-Key' },
      });
      held.open();
      expect((await first).statusCode).toBe(201);
    } finally {
      t.container.secrets.create = real;
    }
    // Once answered, the key replays.
    const third = await s.create({ name: 'racy', value: 'v' }, idem('race'));
    expect([third.statusCode, third.headers['idempotent-replayed']]).toEqual([201, 'true']);
  });

  it('runs exactly one of many requests sent at once with one key', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'many', value: 'v1' });
    const answers = await Promise.all(Array.from({ length: 8 }, () => s.update('many', { value: 'v2' }, idem('burst'))));
    const ran = answers.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
    expect(ran).toHaveLength(1);
    for (const r of answers) {
      if (r.statusCode === 200) expect(r.body).toBe(ran[0]!.body);
      else expect([r.statusCode, json(r).error.code]).toEqual([409, 'CONFLICT']);
    }
    expect(await versionsOf(key, 'many')).toBe(2);
  });

  it('frees the key of a request that died running once its lock lapses; the late answer does not replace the new one', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'stuck', value: 'v1' });
    const held = gate();
    const reached = gate();
    const real = t.container.secrets.update;
    let calls = 0;
    t.container.secrets.update = async (...args) => {
      if (++calls === 1) {
        reached.open();
        await held.opened;
      }
      return real(...args);
    };
    try {
      const stuck = s.update('stuck', { value: 'v2' }, idem('stuck'));
      await reached.opened;
      clock.advance(IDEMPOTENT_REQUEST_LOCK_MS - 1);
      expect((await s.update('stuck', { value: 'v2' }, idem('stuck'))).statusCode).toBe(409);
      clock.advance(1);
      const retry = await s.update('stuck', { value: 'v2' }, idem('stuck'));
      expect([retry.statusCode, retry.headers['idempotent-replayed'], json(retry).version]).toEqual([200, undefined, 2]);
      // The first request wakes up and writes (it had not yet), but the key now belongs to the retry.
      held.open();
      expect(json(await stuck).version).toBe(3);
      const replay = await s.update('stuck', { value: 'v2' }, idem('stuck'));
      expect([replay.headers['idempotent-replayed'], replay.body]).toEqual(['true', retry.body]);
    } finally {
      t.container.secrets.update = real;
    }
  });

  it('keeps an answer 24 hours: the key then runs again, and may carry another request', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'daily', value: 'v1' });
    expect(json(await s.update('daily', { value: 'v2' }, idem('day'))).version).toBe(2);
    clock.advance(IDEMPOTENT_REQUEST_TTL_MS - 1);
    expect((await s.update('daily', { value: 'v2' }, idem('day'))).headers['idempotent-replayed']).toBe('true');
    expect((await s.update('daily', { value: 'other' }, idem('day'))).statusCode).toBe(422);
    clock.advance(1);
    const later = await s.update('daily', { value: 'v3' }, idem('day'));
    expect([later.statusCode, later.headers['idempotent-replayed'], json(later).version]).toEqual([200, undefined, 3]);
    expect((await s.update('daily', { value: 'v3' }, idem('day'))).headers['idempotent-replayed']).toBe('true');
  });

  it('keeps only successes: after an error answer the key runs again', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    const missing = await s.update('later', { value: 'v2' }, idem('retry-me'));
    expect(missing.statusCode).toBe(404);
    await s.create({ name: 'later', value: 'v1' });
    const retried = await s.update('later', { value: 'v2' }, idem('retry-me'));
    expect([retried.statusCode, retried.headers['idempotent-replayed'], json(retried).version]).toEqual([200, undefined, 2]);
    // A body refused by validation uses no key at all.
    expect((await s.create({ name: 'x', value: '' }, idem('invalid-first'))).statusCode).toBe(400);
    expect((await s.create({ name: 'x', value: 'ok' }, idem('invalid-first'))).statusCode).toBe(201);
  });

  it('keeps keys per API key: another tenant, mode or key of the tenant runs its own request', async () => {
    const first = await t.freshTenant();
    const tenant = t.tenant;
    const body = { name: 'shared-name', value: 'v' };
    expect((await g11(t.app, first).create(body, idem('same'))).statusCode).toBe(201);
    const sandbox = await g11(t.app, await t.key({ tenant, mode: 'test' })).create(body, idem('same'));
    expect([sandbox.statusCode, sandbox.headers['idempotent-replayed']]).toEqual([201, undefined]);
    const otherTenant = await g11(t.app, await t.freshTenant()).create(body, idem('same'));
    expect([otherTenant.statusCode, otherTenant.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(json(otherTenant).id).not.toBe(json(sandbox).id);
    // Another key of the first tenant is not handed the first key's answer: its request runs (the name is taken).
    const sibling = await g11(t.app, await t.key({ tenant })).create(body, idem('same'));
    expect([sibling.statusCode, json(sibling).error.code]).toEqual([409, 'CONFLICT']);
  });

  it('checks the route\'s scope before a replay: a key that lost secrets:write gets 403, not the kept value', async () => {
    const admin = await t.freshTenant();
    const writerKey = await t.key({ scopes: ['secrets:read', 'secrets:write'] });
    const writer = g11(t.app, writerKey);
    expect((await writer.create({ name: 'scoped', value: 'kept-value' }, idem('scoped'))).statusCode).toBe(201);
    const writerId = (await t.container.apiKeys.authenticate(writerKey)).keyId;
    expect((await g11Keys(t.app, admin).update(writerId, { scopes: ['secrets:read'] })).statusCode).toBe(200);
    const replay = await writer.create({ name: 'scoped', value: 'kept-value' }, idem('scoped'));
    expect(replay.statusCode).toBe(403);
    expect(json(replay).error).toMatchObject({ code: 'PERMISSION_DENIED', details: { requiredScope: 'secrets:write' } });
  });

  it('refuses a malformed key with 400 VALIDATION_ERROR, and ignores the header on GET and DELETE', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    for (const bad of ['', 'x'.repeat(256), 'tab\there']) {
      const res = await s.create({ name: 'n', value: 'v' }, idem(bad));
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(json(res).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'Idempotency-Key' }] } });
    }
    expect((await s.create({ name: 'n', value: 'v' }, idem('x'.repeat(255)))).statusCode).toBe(201);
    expect((await s.list()).statusCode).toBe(200);
    const del = () => t.app.inject({ method: 'DELETE', url: '/v1/security/secrets/n', headers: { authorization: `Bearer ${key}`, ...idem('del') } });
    expect((await del()).statusCode).toBe(204);
    expect((await del()).statusCode).toBe(404);
    const get = await t.app.inject({ method: 'GET', url: '/v1/security/secrets/n', headers: { authorization: `Bearer ${key}`, ...idem('') } });
    expect(get.statusCode).toBe(404);
  });

  it('keeps nothing readable at rest: no row of any table holds a value or a key it replays', async () => {
    const admin = await t.freshTenant();
    const s = g11(t.app, admin);
    const markers = ['replay-marker-created-value', 'replay-marker-updated-value'];
    expect((await s.create({ name: 'sealed', value: markers[0] }, idem('rest-1'))).statusCode).toBe(201);
    expect((await s.update('sealed', { value: markers[1] }, idem('rest-2'))).statusCode).toBe(200);
    const issued = json(await t.app.inject({
      method: 'POST', url: '/v1/security/api-keys', headers: { authorization: `Bearer ${admin}`, ...idem('rest-3') }, payload: { name: 'kept' },
    })).key as string;
    const rows: string[] = [];
    for (const table of TRANSFER_TABLES) rows.push(JSON.stringify(await t.container.storage.transfer.dump(table, null, 1_000_000)));
    const everything = rows.join('\n');
    expect(everything).toContain('rest-3');
    for (const secret of [...markers, issued]) expect(everything.includes(secret), secret).toBe(false);
    const kept = await t.container.storage.transfer.dump(TRANSFER_TABLES.find((x) => x.name === 'idempotent_requests')!, null, 1_000_000);
    expect(kept.filter((r) => r.tenant_id === t.tenant && r.response_payload !== null)).toHaveLength(3);
    if (testStoreKind() === 'sqlite') {
      const file = t.container.config.databaseFile;
      const bytes = Buffer.concat([readFileSync(file), ...(existsSync(`${file}-wal`) ? [readFileSync(`${file}-wal`)] : [])]);
      expect(bytes.includes(Buffer.from('rest-3'))).toBe(true);
      for (const secret of [...markers, issued]) expect(bytes.includes(Buffer.from(secret)), secret).toBe(false);
    }
    // And they still replay.
    expect(json(await s.update('sealed', { value: markers[1] }, idem('rest-2'))).value).toBe(markers[1]);
  });
});

describe('G11 Idempotency-Key routes', () => {
  it('refuses to register a POST or PUT route whose operation is not idempotent in the catalogue', () => {
    const hooks = idempotencyHooks({ begin: async () => { throw new Error('unused'); }, finish: async () => false, abandon: async () => undefined });
    const route = (method: string | string[], operation?: string) => ({ method, url: '/v1/security/x', config: { operation }, handler: async () => null }) as unknown as RouteOptions;
    expect(() => hooks.requireIdempotentOperations(route('POST'))).toThrow('G11 route POST /v1/security/x takes an Idempotency-Key');
    expect(() => hooks.requireIdempotentOperations(route(['GET', 'PUT'], 'secret.read'))).toThrow('PUT /v1/security/x');
    expect(() => hooks.requireIdempotentOperations(route(['GET', 'DELETE'], 'secret.read'))).not.toThrow();
    expect(() => hooks.requireIdempotentOperations(route('POST', 'secret.create'))).not.toThrow();
  });
});

/** The store of an app whose audit appends can be made to fail: the real one, wrapped. */
async function openStore(file: string): Promise<Storage> {
  return testStoreKind() === 'postgres' ? openTestPostgresStorage(file) : createSqliteStorage({ file });
}

describe('G11 Idempotency-Key when the audit log fails', () => {
  let t: TestApp;
  let failAppends = false;
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-idempotency-audit-'));
  beforeAll(async () => {
    const real = await openStore(join(dir, 'mnemo.db'));
    const storage: Storage = {
      ...real,
      audit: { ...real.audit, append: async (entry, heads) => { if (failAppends) throw new Error('disk full'); return real.audit.append(entry, heads); } },
    };
    t = await createTestApp({ overrides: { storage } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the answer it withheld: the retry gets it, recorded, and the write is not run twice', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'guarded', value: 'v1' });
    failAppends = true;
    try {
      const withheld = await s.update('guarded', { value: 'v2' }, idem('withheld'));
      expect(withheld.statusCode).toBe(500);
      expect(withheld.body).not.toContain('v2');
    } finally {
      failAppends = false;
    }
    const retry = await s.update('guarded', { value: 'v2' }, idem('withheld'));
    expect([retry.statusCode, retry.headers['idempotent-replayed'], json(retry).version]).toEqual([200, 'true', 2]);
    expect(json(await s.get('guarded')).version).toBe(2);
    const rows = json(await g11Audit(t.app, key).list('action=secret.update')).data;
    expect(rows.map((r: Json) => [r.status, r.metadata])).toEqual([[200, { replayed: true }]]);
  });
});
