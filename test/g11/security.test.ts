import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, uniqueTenant, type TestApp } from '../support/test-app.ts';
import { testStoreKind } from '../support/test-store.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { g11 } from './client.ts';

describe('G11 secrets: security', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());

  it('refuses a request without a usable key with 401 AUTHENTICATION_REQUIRED', async () => {
    for (const key of [undefined, 'mnemo_live_forged']) {
      const s = g11(t.app, key);
      for (const res of [await s.list(), await s.get('x'), await s.create({ name: 'x', value: 'y' }), await s.delete('x')]) {
        expect(res.statusCode).toBe(401);
        expect(json(res).error).toMatchObject({ code: 'AUTHENTICATION_REQUIRED', details: { reason: key ? 'invalid_api_key' : 'missing_api_key' } });
        expect(res.headers['www-authenticate']).toBe('Bearer realm="mnemo"');
      }
    }
  });

  it('needs secrets:read to read, secrets:write to create and change, secrets:delete to delete (403 PERMISSION_DENIED)', async () => {
    const tenant = uniqueTenant('scopes');
    const admin = g11(t.app, await t.key({ tenant }));
    await admin.create({ name: 'guarded', value: 'v' });
    const readOnly = g11(t.app, await t.key({ tenant, scopes: ['secrets:read'] }));
    const writeOnly = g11(t.app, await t.key({ tenant, scopes: ['secrets:write'] }));
    const memoriesOnly = g11(t.app, await t.key({ tenant, scopes: ['memories:read', 'memories:write'] }));
    const denied = (res: { statusCode: number; json: () => unknown }, scope: string) => {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: { code: 'PERMISSION_DENIED', message: `This API key lacks the ${scope} scope`, details: { requiredScope: scope } } });
    };
    expect((await readOnly.get('guarded')).statusCode).toBe(200);
    expect((await readOnly.list()).statusCode).toBe(200);
    denied(await readOnly.create({ name: 'new', value: 'v' }), 'secrets:write');
    denied(await readOnly.update('guarded', { value: 'w' }), 'secrets:write');
    denied(await readOnly.delete('guarded'), 'secrets:delete');
    denied(await writeOnly.get('guarded'), 'secrets:read');
    denied(await writeOnly.delete('guarded'), 'secrets:delete');
    expect((await writeOnly.update('guarded', { value: 'w' })).statusCode).toBe(200);
    denied(await memoriesOnly.list(), 'secrets:read');
    expect(json(await admin.get('guarded'))).toMatchObject({ value: 'w', version: 2 });
  });

  it("never shows another tenant's or mode's secret: 404 like a missing one, and lists stay apart", async () => {
    const alice = g11(t.app, await t.key({ tenant: uniqueTenant('alice') }));
    await alice.create({ name: 'shared-name', value: 'alice-value' });
    await alice.create({ name: 'alice-only', value: 'alice-private' });
    const mallory = g11(t.app, await t.key({ tenant: uniqueTenant('mallory') }));
    const sandbox = g11(t.app, await t.key({ tenant: uniqueTenant('alice-sandbox'), mode: 'test' }));
    for (const other of [mallory, sandbox]) {
      for (const res of [await other.get('alice-only'), await other.update('alice-only', { value: 'pwned' }), await other.delete('alice-only')]) {
        expect(res.statusCode).toBe(404);
        expect(json(res)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: 'Secret "alice-only" not found', details: {} } });
      }
      expect(json(await other.list()).data).toEqual([]);
      // The same name is free for another owner, and stays separate.
      expect((await other.create({ name: 'shared-name', value: 'other-value' })).statusCode).toBe(201);
    }
    expect(json(await alice.get('shared-name')).value).toBe('alice-value');
    expect(json(await alice.get('alice-only')).value).toBe('alice-private');
    expect(json(await mallory.get('shared-name')).value).toBe('other-value');
  });

  it('keeps a test-mode key of the same tenant on its own sandbox set', async () => {
    const tenant = uniqueTenant('sandboxed');
    const live = g11(t.app, await t.key({ tenant }));
    const test = g11(t.app, await t.key({ tenant, mode: 'test' }));
    await live.create({ name: 'api-token', value: 'live-token' });
    expect((await test.get('api-token')).statusCode).toBe(404);
    await test.create({ name: 'api-token', value: 'test-token' });
    expect(json(await live.get('api-token')).value).toBe('live-token');
    expect(json(await test.get('api-token')).value).toBe('test-token');
  });

  it('stores no plaintext: no row of any table, nor (SQLite) any byte of the database file, holds a value written', async () => {
    const s = g11(t.app, await t.freshTenant());
    const plaintexts = Array.from({ length: 20 }, (_, i) => `plaintext-marker-${i}-${'q'.repeat(i)}`);
    for (const [i, p] of plaintexts.entries()) await s.create({ name: `plain-${i}`, value: p });
    await s.update('plain-0', { value: 'plaintext-marker-updated' });
    const written = [...plaintexts, 'plaintext-marker-updated'];
    // Every row of every table, as the store gives them to `mnemo migrate`.
    const rows: string[] = [];
    for (const table of TRANSFER_TABLES) rows.push(JSON.stringify(await t.container.storage.transfer.dump(table, null, 1_000_000)));
    expect(rows.join('\n')).toContain('plain-19');
    for (const p of written) expect(rows.join('\n').includes(p), p).toBe(false);
    if (testStoreKind() === 'sqlite') {
      // The file and its write-ahead log: every byte SQLite has written, checkpointed or not.
      const file = t.container.config.databaseFile;
      const bytes = Buffer.concat([readFileSync(file), ...(existsSync(`${file}-wal`) ? [readFileSync(`${file}-wal`)] : [])]);
      expect(bytes.includes(Buffer.from('plain-19'))).toBe(true);
      for (const p of written) expect(bytes.includes(Buffer.from(p)), p).toBe(false);
    }
    // And the values still read back.
    expect(json(await s.get('plain-7')).value).toBe(plaintexts[7]);
  });

  it('fails a read (500, no value) when two sealed values are swapped in the store', async () => {
    const owner = { tenantId: uniqueTenant('swap'), mode: 'live' as const };
    const s = g11(t.app, await t.key({ tenant: owner.tenantId }));
    await s.create({ name: 'first', value: 'value-one' });
    await s.create({ name: 'second', value: 'value-two' });
    const repo = t.container.storage.secrets;
    const one = (await repo.find(owner, 'first'))!;
    const two = (await repo.find(owner, 'second'))!;
    const refs = (await repo.sealedValues(null, 10_000)).filter((r) => r.context.includes(owner.tenantId));
    const refOf = (name: string) => refs.find((r) => r.context.includes(name))!.ref;
    await repo.rewrap(refOf('first'), two.version.sealed);
    await repo.rewrap(refOf('second'), one.version.sealed);
    for (const name of ['first', 'second']) {
      const res = await s.get(name);
      expect(res.statusCode).toBe(500);
      expect(json(res)).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} } });
      expect(res.body).not.toContain('value-');
    }
  });
});
