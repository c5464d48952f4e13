import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { digestKey, generateKeyText, parseKeyText } from '../../src/core/api-keys/api-key.format.ts';
import type { ApiKeyRepository } from '../../src/core/api-keys/api-key.repository.ts';
import { createApiKeyService } from '../../src/core/api-keys/api-key.service.ts';
import { ALL_PERMISSIONS, DEFAULT_PERMISSIONS } from '../../src/core/api-keys/api-key.types.ts';
import { ManualClock } from '../../src/core/clock.ts';

describe('API key format', () => {
  it('generates keys with mode prefix, 178 random bits and a checksum that holds', () => {
    const live = generateKeyText('live');
    const test = generateKeyText('test');
    expect(live).toMatch(/^mnemo_live_[0-9A-Za-z]{36}$/);
    expect(test).toMatch(/^mnemo_test_[0-9A-Za-z]{36}$/);
    expect(parseKeyText(live)).toEqual({ mode: 'live' });
    expect(parseKeyText(test)).toEqual({ mode: 'test' });
    const many = new Set(Array.from({ length: 1000 }, () => generateKeyText('live')));
    expect(many.size).toBe(1000);
  });

  it('rejects any single-character change through the checksum', () => {
    const key = generateKeyText('live');
    for (let i = 'mnemo_live_'.length; i < key.length; i++) {
      const c = key[i] === 'x' ? 'y' : 'x';
      expect(parseKeyText(key.slice(0, i) + c + key.slice(i + 1))).toBeNull();
    }
    expect(parseKeyText(key.replace('live', 'test'))).toBeNull();
    expect(parseKeyText(`${key}x`)).toBeNull();
    expect(parseKeyText('')).toBeNull();
  });
});

describe('API key service', () => {
  const setup = () => {
    const storage = createSqliteStorage({ file: join(mkdtempSync(join(tmpdir(), 'mnemo-keys-')), 'k.db') });
    let lookups = 0;
    // Counts storage lookups to prove malformed keys never reach storage.
    const keys: ApiKeyRepository = { ...storage.apiKeys, findByDigest: (d) => { lookups++; return storage.apiKeys.findByDigest(d); } };
    const clock = new ManualClock();
    return { storage, clock, lookups: () => lookups, svc: createApiKeyService({ keys, clock }) };
  };

  it('stores only the digest and authenticates the key to its principal', async () => {
    const { svc, storage } = setup();
    const { record, key } = await svc.create({ tenantId: 't', userId: 'u', tier: 'pro', mode: 'test', scopes: ['memories:read'] });
    expect(record.digest).toBe(digestKey(key));
    const principal = await svc.authenticate(key);
    expect(principal).toMatchObject({ keyId: record.id, tenantId: 't', userId: 'u', tier: 'pro', mode: 'test' });
    expect([...principal.scopes]).toEqual(['memories:read']);
    const { record: all } = await svc.create({ tenantId: 't', userId: 'u', tier: 'free', mode: 'live' });
    // Every scope but the opt-in ones (memories:forget, memories:auto_ingest), which a key gets only when asked for by name.
    expect(all.scopes).toEqual([...DEFAULT_PERMISSIONS]);
    expect(all.scopes).toEqual(ALL_PERMISSIONS.filter((p) => p !== 'memories:forget' && p !== 'memories:auto_ingest'));
    await storage.close();
  });

  it('refuses malformed keys before any storage lookup', async () => {
    const { svc, lookups, storage } = setup();
    const { key } = await svc.create({ tenantId: 't', userId: 'u', tier: 'pro', mode: 'live' });
    const typo = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
    for (const bad of [undefined, '', 'hello', typo, `Bearer ${key}`]) {
      await expect(svc.authenticate(bad)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    }
    expect(lookups()).toBe(0);
    await svc.authenticate(key);
    expect(lookups()).toBe(1);
    await storage.close();
  });

  it('refuses revoked and expired keys', async () => {
    const { svc, clock, storage } = setup();
    const { record, key } = await svc.create({ tenantId: 't', userId: 'u', tier: 'pro', mode: 'live' });
    expect(await svc.revoke(record.id)).toBe(true);
    await expect(svc.authenticate(key)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringContaining('revoked') });
    const expiring = await svc.create({ tenantId: 't', userId: 'u', tier: 'pro', mode: 'live', expiresAt: new Date(clock.now().getTime() + 1000) });
    await expect(svc.authenticate(expiring.key)).resolves.toBeTruthy();
    clock.advance(1000);
    await expect(svc.authenticate(expiring.key)).rejects.toMatchObject({ message: expect.stringContaining('expired') });
    await storage.close();
  });
});
