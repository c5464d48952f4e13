import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyringFrom, masterKeyId } from '../../src/adapters/secrets/master-keyring.ts';
import { createSqliteStorage, type SqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { createAuditHeadSigner, type SignedAuditHead } from '../../src/core/audit/audit.head.ts';
import { createAuditService } from '../../src/core/audit/audit.service.ts';
import { verifyAuditChains } from '../../src/core/audit/audit.verifier.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { createIdempotentRequestService, requestFingerprint } from '../../src/core/idempotency/idempotent-request.service.ts';
import { open, type Keyring } from '../../src/core/secrets/envelope.ts';
import { KeyringMismatchError, verifyKeyring } from '../../src/core/secrets/keyring-check.ts';
import { rotateMasterKey, type RotationProgress } from '../../src/core/secrets/master-key-rotation.ts';
import { createSecretService } from '../../src/core/secrets/secret.service.ts';
import { secretVersionContext, type SecretOwner } from '../../src/core/secrets/secret.types.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { sealPlaintextWebhookSecrets } from '../../src/core/webhooks/webhook-secret.ts';
import { g10Hook, g11Hook, g9Hook, insertHook, type TestHook } from '../webhooks/support.ts';
import { createMcpResourceService } from '../../src/core/mcp-access/mcp-resource.service.ts';
import { mcpResourceValueContext } from '../../src/core/mcp-access/mcp.types.ts';

/**
 * Master-key rotation over a real store (SQLite in memory; both adapters' parts are in the storage contract): every
 * sealed value moves to the new key, the old key's check goes last, an interrupted run is finished by running again,
 * and a server still sealing with the old key during the run keeps that key required.
 */
describe('master-key rotation (core)', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  const [idA, idB] = [masterKeyId(keyA), masterKeyId(keyB)];
  const old = keyringFrom([keyA]);
  const rotating = keyringFrom([keyB, keyA]);
  const fresh = keyringFrom([keyB]);
  const owner: SecretOwner = { tenantId: 'tenant-r', mode: 'live' };
  const actor = { userId: 'u1', region: null };
  const reader = { userId: 'u1', via: 'cli' as const };
  let storage: SqliteStorage;
  let hooks: TestHook[];
  /** The bodies of the answers kept for Idempotency-Key replays, by key. */
  const REPLAYS = new Map([['idem-1', '{"value":"replayed-one"}'], ['idem-2', '{"key":"mnemo_live_replayed"}']]);
  const caller = { tenantId: 'tenant-r', mode: 'live' as const, apiKeyId: 'key_r' };
  const fingerprint = requestFingerprint({ method: 'POST', route: '/v1/security/secrets', params: {}, query: {}, body: {}, region: null });
  const replaysUnder = (keyring: Keyring) =>
    createIdempotentRequestService({ requests: storage.idempotentRequests, keyring: () => keyring, clock });
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const secretsUnder = (keyring: Keyring) => createSecretService({ secrets: storage.secrets, events: storage.events, keyring: () => keyring, clock });
  const NAMES = ['one', 'two', 'three', 'four', 'five'];
  /** Custom MCP resources hold a value sealed like a secret's. */
  const CUSTOM = ['svc://custom/config/alpha', 'svc://custom/config/beta'];
  const mcpUnder = (keyring: Keyring) => createMcpResourceService({
    resources: storage.mcpResources, approvals: storage.mcpApprovals, secrets: secretsUnder(keyring), apiKeys: storage.apiKeys,
    keyring: () => keyring, clock,
  });
  const mcpCaller = { ...owner, userId: 'u1', scopes: new Set(['secrets:write', 'mcp:access'] as const) };
  /** The audit log as a server with `keyring` records it: its chains' heads signed with the keyring's active key. */
  const auditUnder = (keyring: Keyring) => createAuditService({ audit: storage.audit, clock, heads: createAuditHeadSigner(keyring) });
  const record = (keyring: Keyring, tenantId = owner.tenantId) => auditUnder(keyring).record({
    owner: { tenantId, mode: 'live' }, actor: { userId: 'u1', keyId: null }, action: 'secret.read', resource: 'secret:one', outcome: 'success', status: 200,
  });
  const auditVerifies = async (keyring: Keyring) => (await verifyAuditChains(storage.audit, createAuditHeadSigner(keyring))).ok;

  beforeEach(async () => {
    storage = createSqliteStorage({ file: ':memory:' });
    // A store written by a server with key A: five secrets of two versions each, three webhooks.
    await verifyKeyring(storage.secrets, old);
    const secrets = secretsUnder(old);
    for (const name of NAMES) {
      await secrets.create(owner, actor, { name, value: `${name}-v1`, tags: [], expiresInMs: null });
      await secrets.update(owner, actor, name, { value: `${name}-v2` });
    }
    hooks = [g9Hook('https://example.com/a'), g9Hook('https://example.com/b'), g10Hook('https://example.com/c'), g11Hook('https://example.com/d')];
    for (const h of hooks) await insertHook(storage.webhooks, old, h);
    // And two answers kept for Idempotency-Key replays.
    for (const [key, body] of REPLAYS) {
      const begun = await replaysUnder(old).begin(caller, key, fingerprint);
      if (begun.kind !== 'run') throw new Error('the key was new');
      expect(await replaysUnder(old).finish(begun.ticket, { status: 201, headers: { 'content-type': 'application/json' }, body })).toBe(true);
    }
    for (const uri of CUSTOM) {
      await mcpUnder(old).register(mcpCaller, { uri, name: uri, requiresApproval: false, value: `value of ${uri}` });
    }
    // And two audit chains, their heads signed with key A.
    for (const tenantId of [owner.tenantId, 'tenant-s', owner.tenantId]) await record(old, tenantId);
  });
  afterEach(() => storage.close());

  /** Opens every value with `keyring` and checks it; returns the master key ids the values are under. */
  async function readAll(keyring: Keyring): Promise<string[]> {
    const keys: string[] = [];
    for (const name of NAMES) {
      for (const version of [1, 2]) {
        const found = (await storage.secrets.find(owner, name, version))!;
        expect(open(keyring, secretVersionContext(owner, name, version), found.version.sealed)).toBe(`${name}-v${version}`);
        keys.push(found.version.sealed.keyId);
      }
    }
    const sealed = await storage.webhooks.sealedSecrets(null, 100);
    expect(sealed).toHaveLength(hooks.length);
    for (const [i, r] of sealed.entries()) {
      expect(open(keyring, r.context, r.sealed)).toBe(hooks[i]!.secret);
      keys.push(r.sealed.keyId);
    }
    for (const [key, body] of REPLAYS) {
      const replay = await replaysUnder(keyring).begin(caller, key, fingerprint);
      expect(replay).toEqual({ kind: 'replay', answer: { status: 201, headers: { 'content-type': 'application/json' }, body } });
    }
    for (const r of await storage.idempotentRequests.sealedValues(null, 100)) keys.push(r.sealed.keyId);
    const values = await storage.mcpResources.sealedValues(null, 100);
    expect(values).toHaveLength(CUSTOM.length);
    for (const r of values) {
      const resource = (await storage.mcpResources.findById(owner, r.ref))!;
      expect(r.context).toEqual(mcpResourceValueContext(owner, resource.id));
      expect(open(keyring, r.context, r.sealed)).toBe(`value of ${resource.uri}`);
      keys.push(r.sealed.keyId);
    }
    return [...new Set(keys)];
  }

  it('re-wraps every value under the new key, then drops the old key\'s check: the new key alone opens everything', async () => {
    const progress: RotationProgress[] = [];
    const summary = await rotateMasterKey({ storage, keyring: rotating, pageSize: 3, progress: (p) => { progress.push(p); } });
    expect(summary).toEqual({
      activeKeyId: idB, sealedPlaintext: 0,
      sources: [
        { name: 'secret versions', values: 10, rewrapped: 10 }, { name: 'webhook secrets', values: 4, rewrapped: 4 },
        { name: 'request replays', values: 2, rewrapped: 2 }, { name: 'MCP values', values: 2, rewrapped: 2 },
      ],
      auditHeads: { heads: 2, resigned: 2, unverified: 0 },
      retiredKeyIds: [idA], keptKeyIds: [], failed: 0, failures: [], lateWrites: 0, complete: true,
    });
    // In pages, each told: four of the ten versions' pages and two of the webhooks' (G9, G10 and G11 alike) on each pass.
    expect(progress.filter((p) => p.pass === 1).map((p) => [p.source, p.checked, p.rewrapped])).toEqual([
      ['secret versions', 3, 3], ['secret versions', 6, 6], ['secret versions', 9, 9], ['secret versions', 10, 10],
      ['webhook secrets', 3, 3], ['webhook secrets', 4, 4],
      ['request replays', 2, 2],
      ['MCP values', 2, 2],
      ['audit chain heads', 2, 2],
    ]);
    expect(progress.filter((p) => p.pass === 2).every((p) => p.rewrapped === 0)).toBe(true);

    expect(await readAll(fresh)).toEqual([idB]);
    expect(await storage.secrets.keyCheckIds()).toEqual([idB]);
    await verifyKeyring(storage.secrets, fresh);
    // The old key alone no longer fits the store.
    await expect(verifyKeyring(storage.secrets, old)).rejects.toBeInstanceOf(KeyringMismatchError);
    expect(await secretsUnder(fresh).get(owner, reader, 'three', 1)).toMatchObject({ value: 'three-v1' });
    expect(await mcpUnder(fresh).read(mcpCaller, CUSTOM[1]!, undefined)).toMatchObject({ value: `value of ${CUSTOM[1]}` });
    // Every audit chain head is under B: the new key alone verifies them, and the chains go on under it.
    expect((await storage.audit.heads(null, 10)).map((h) => h.keyId)).toEqual([idB, idB]);
    expect(await auditVerifies(fresh)).toBe(true);
    await record(fresh);
    expect(await auditVerifies(fresh)).toBe(true);

    // Again: nothing to do.
    expect(await rotateMasterKey({ storage, keyring: rotating })).toMatchObject({
      sources: [{ values: 10, rewrapped: 0 }, { values: 4, rewrapped: 0 }, { values: 2, rewrapped: 0 }, { values: 2, rewrapped: 0 }],
      retiredKeyIds: [], complete: true,
    });
  });

  it('an interrupted run leaves every value readable and the old key required; running it again finishes', async () => {
    let rewraps = 0;
    const crashing = {
      ...storage,
      secrets: {
        ...storage.secrets,
        rewrap: async (ref: string, sealed: Parameters<SqliteStorage['secrets']['rewrap']>[1]) => {
          if (++rewraps > 4) throw new Error('killed');
          await storage.secrets.rewrap(ref, sealed);
        },
      },
    };
    await expect(rotateMasterKey({ storage: crashing, keyring: rotating, pageSize: 2 })).rejects.toThrow('killed');
    // Half done: both keys are needed, and both keys' checks say so.
    expect((await readAll(rotating)).sort()).toEqual([idA, idB].sort());
    expect(await storage.secrets.keyCheckIds()).toEqual([idA, idB].sort());
    await expect(verifyKeyring(storage.secrets, fresh)).rejects.toThrow(/does not have/);
    await expect(verifyKeyring(storage.secrets, old)).rejects.toThrow(/does not have/);

    const summary = await rotateMasterKey({ storage, keyring: rotating, pageSize: 2 });
    expect(summary).toMatchObject({
      sources: [{ values: 10, rewrapped: 6 }, { values: 4, rewrapped: 4 }, { values: 2, rewrapped: 2 }, { values: 2, rewrapped: 2 }],
      retiredKeyIds: [idA], complete: true,
    });
    expect(await readAll(fresh)).toEqual([idB]);
  });

  it('a server still sealing with the old key during the run: its value is re-wrapped, but the old key stays required', async () => {
    let wrote = false;
    const summary = await rotateMasterKey({
      storage, keyring: rotating,
      progress: async (p) => {
        // After the first pass went by, a server whose keyring still has A first writes a secret.
        if (p.pass === 1 && p.source === 'webhook secrets' && !wrote) {
          wrote = true;
          await secretsUnder(old).create(owner, actor, { name: 'late', value: 'written-late', tags: [], expiresInMs: null });
        }
      },
    });
    expect(summary).toMatchObject({ lateWrites: 1, keptKeyIds: [idA], retiredKeyIds: [], complete: false });
    // The check of A is back (or was never gone): no server starts without A, which that server may still use.
    expect(await storage.secrets.keyCheckIds()).toEqual([idA, idB].sort());
    await expect(verifyKeyring(storage.secrets, fresh)).rejects.toThrow(new RegExp(`sealed with master key ${idA}`));
    expect((await storage.secrets.find(owner, 'late'))!.version.sealed.keyId).toBe(idB);

    // Once every server seals with B, a run completes.
    expect(await rotateMasterKey({ storage, keyring: rotating })).toMatchObject({ lateWrites: 0, retiredKeyIds: [idA], complete: true });
    expect(await secretsUnder(fresh).get(owner, reader, 'late')).toMatchObject({ value: 'written-late' });
  });

  it('re-signs audit heads only when they verify, and keeps the old key for a head signed with it during the run', async () => {
    // A head forged for the first chain (its MAC made without the key): never re-signed, it stays visible.
    const [forged] = await storage.audit.heads(null, 1) as SignedAuditHead[];
    await storage.audit.reviseHeads('all', (stored) => (stored.owner.tenantId === forged!.owner.tenantId ? { ...stored, mac: '0'.repeat(64) } as SignedAuditHead : null));
    let wrote = false;
    const summary = await rotateMasterKey({
      storage, keyring: rotating,
      progress: async (p) => {
        // After the heads' first pass, a server whose keyring still has A first (and B second) appends to the other chain.
        if (p.pass === 1 && p.source === 'audit chain heads' && !wrote) {
          wrote = true;
          await record(keyringFrom([keyA, keyB]), 'tenant-s');
        }
      },
    });
    expect(summary).toMatchObject({ auditHeads: { heads: 2, resigned: 1, unverified: 1 }, lateWrites: 1, keptKeyIds: [idA], complete: false });
    expect((await storage.audit.heads(null, 10)).map((h) => [h.owner.tenantId, h.keyId, h.mac === '0'.repeat(64)])).toEqual([
      ['tenant-r', idA, true], ['tenant-s', idB, false],
    ]);
    expect(await auditVerifies(rotating)).toBe(false);
  });

  it('leaves a value that does not open as it is, reports it, and keeps its key required', async () => {
    // Two sealed values swapped between rows (tampering, or a bad restore): neither opens in its new place.
    const refs = await storage.secrets.sealedValues(null, 100);
    const [x, y] = [refs[0]!, refs[2]!];
    await storage.secrets.rewrap(x.ref, y.sealed);
    await storage.secrets.rewrap(y.ref, x.sealed);
    const summary = await rotateMasterKey({ storage, keyring: rotating });
    expect(summary).toMatchObject({
      sources: [{ values: 10, rewrapped: 8 }, { values: 4, rewrapped: 4 }, { values: 2, rewrapped: 2 }, { values: 2, rewrapped: 2 }], failed: 2,
      keptKeyIds: [idA], retiredKeyIds: [], complete: false,
    });
    expect(summary.failures).toEqual([x, y].map((r) => ({ source: 'secret versions', ref: r.ref, keyId: idA, error: expect.stringMatching(/failed authentication/) })));
    expect(await storage.secrets.keyCheckIds()).toEqual([idA, idB].sort());
    const after = await storage.secrets.sealedValues(null, 100);
    expect(after.filter((r) => r.sealed.keyId === idA).map((r) => r.ref)).toEqual([x.ref, y.ref]);
  });

  it('refuses a keyring without a key the store needs, and changes nothing', async () => {
    const other = keyringFrom([randomBytes(32)]);
    await expect(rotateMasterKey({ storage, keyring: other })).rejects.toBeInstanceOf(KeyringMismatchError);
    expect(await readAll(old)).toEqual([idA]);
    expect(await storage.secrets.keyCheckIds()).toEqual([idA]);
  });

  it('seals the plaintext secrets an older store left, under the new key, in batches, once', async () => {
    const table = TRANSFER_TABLES.find((t) => t.name === 'webhooks')!;
    const legacy = [1, 2, 3, 4, 5].map((i) => g9Hook(`https://example.com/legacy-${i}`));
    await storage.transfer.load(table, legacy.map((w, i) => ({
      seq: 100 + i, id: w.id, kind: w.kind, tenant_id: w.scope.tenantId, mode: w.scope.mode, workspace: w.scope.workspace, url: w.url,
      events: w.events, description: null, status: 'active', retry_policy: w.retryPolicy, filters: {}, created_at: 0, updated_at: 0,
      last_delivery_at: null, total_attempts: 0, successful_deliveries: 0, failed_deliveries: 0,
      plaintext_secret: w.secret, secret_key_id: null, secret_wrapped_key: null, secret_payload: null,
    })));
    expect(await sealPlaintextWebhookSecrets(storage.webhooks, old, 2)).toBe(5);
    expect(await sealPlaintextWebhookSecrets(storage.webhooks, old, 2)).toBe(0);
    hooks.push(...legacy);
    expect(await readAll(old)).toEqual([idA]);

    await storage.transfer.load(table, [{ ...(await storage.transfer.dump(table, null, 1))[0]!, seq: 200, id: 'webhook_more',
      plaintext_secret: 'one-more-legacy-secret', secret_key_id: null, secret_wrapped_key: null, secret_payload: null }]);
    const summary = await rotateMasterKey({ storage, keyring: rotating });
    expect(summary).toMatchObject({
      sealedPlaintext: 1, sources: [{ values: 10 }, { values: 10, rewrapped: 9 }, { values: 2 }, { values: 2, rewrapped: 2 }], complete: true,
    });
    const more = (await storage.webhooks.sealedSecrets(null, 100)).find((r) => r.context.at(-1) === 'webhook_more')!;
    expect(open(fresh, more.context, more.sealed)).toBe('one-more-legacy-secret');
  });
});
