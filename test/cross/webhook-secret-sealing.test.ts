import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMemoryEventSignature, verifyMnemoSignature } from '../../src/client/webhook-receiver.ts';
import { TRANSFER_TABLES, type TransferRow } from '../../src/core/storage-transfer.ts';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';
import { testStoreKind } from '../support/test-store.ts';
import { g10Hook, g9Hook, startReceiver, type Receiver, type TestHook } from '../webhooks/support.ts';

/**
 * Webhook signing secrets are sealed at rest. A store written before they were (its secrets in plaintext) is sealed
 * by the next start: afterwards no row of any table holds a signing secret, and deliveries are signed as before.
 * Runs on SQLite and (the `postgres` project) on PostgreSQL.
 */
describe('webhook signing secrets sealed at start-up', () => {
  let receiver: Receiver;
  let dir: string;
  const env = () => ({ MNEMO_DATA_DIR: dir, MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' });
  beforeAll(async () => {
    receiver = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'mnemo-sealing-'));
  });
  afterAll(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every row of every table, as `mnemo migrate` reads them. */
  async function dump(t: TestApp): Promise<string> {
    const rows: string[] = [];
    for (const table of TRANSFER_TABLES) rows.push(JSON.stringify(await t.container.storage.transfer.dump(table, null, 1_000_000)));
    return rows.join('\n');
  }

  /** A row as a store written before secrets were sealed holds a webhook: the secret in plaintext. */
  const legacyRow = (w: TestHook, seq: number): TransferRow => ({
    seq, id: w.id, kind: w.kind, tenant_id: w.scope.tenantId, mode: w.scope.mode, workspace: w.scope.workspace, url: w.url,
    events: w.events, description: w.description, status: w.status, retry_policy: w.retryPolicy, filters: w.filters,
    created_at: w.createdAt.getTime(), updated_at: w.updatedAt.getTime(), last_delivery_at: null, total_attempts: 0,
    successful_deliveries: 0, failed_deliveries: 0,
    plaintext_secret: w.secret, secret_key_id: null, secret_wrapped_key: null, secret_payload: null,
  });

  it('leaves no plaintext signing secret in any row after a start, and deliveries are signed with the same secrets', async () => {
    const before = await createTestApp({ env: env() });
    const key = await before.key({ tenant: 'sealing' });
    const scope = { tenantId: 'sealing', mode: 'live' as const, workspace: 'default' };
    const legacy = [
      g9Hook(`${receiver.url}/legacy-g9`, { scope, secret: 'legacy-g9-plaintext-secret' }),
      g10Hook(`${receiver.url}/legacy-g10`, { scope: { ...scope, workspace: null }, events: ['wallet.created'], secret: 'whsec_bGVnYWN5LWcxMC1wbGFpbnRleHQtc2VjcmV0' }),
    ];
    let created: string;
    try {
      const res = await before.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}` }, payload: { url: `${receiver.url}/new-g9`, events: ['memory.created'] } });
      expect(res.statusCode, res.body).toBe(201);
      created = json(res).data.secret as string;
      // Rows as an older version left them (as `mnemo migrate` would copy them from an older store).
      const table = TRANSFER_TABLES.find((t) => t.name === 'webhooks')!;
      expect(await before.container.storage.transfer.load(table, legacy.map((w, i) => legacyRow(w, 1000 + i)))).toBe(2);
      expect(await dump(before)).toContain('legacy-g9-plaintext-secret');
    } finally {
      await before.close();
    }

    const after = await createTestApp({ env: env() });
    let sealed: unknown;
    try {
      sealed = await after.container.storage.webhooks.sealedSecrets(null, 100);
      const rows = await dump(after);
      expect(rows).toContain(legacy[0]!.id);
      for (const secret of [...legacy.map((w) => w.secret), created]) expect(rows.includes(secret), secret).toBe(false);
      expect(await after.container.storage.webhooks.plaintextSecrets(10)).toEqual([]);
      if (testStoreKind() === 'sqlite') {
        // The new webhook's secret never reached the file in plaintext (the legacy ones did, before this version).
        const file = after.container.config.databaseFile;
        const bytes = Buffer.concat([readFileSync(file), ...(existsSync(`${file}-wal`) ? [readFileSync(`${file}-wal`)] : [])]);
        expect(bytes.includes(Buffer.from(created))).toBe(false);
      }

      // Deliveries: each webhook's request verifies with the secret it had.
      const memory = await after.app.inject({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key }, payload: { title: 'Sealed', content: 'secrets' } });
      expect(memory.statusCode, memory.body).toBe(201);
      const event = await after.app.inject({ method: 'POST', url: '/v1/events', headers: { 'x-api-key': key }, payload: { type: 'wallet.created', data: { n: 1 } } });
      expect(event.statusCode, event.body).toBe(201);
      for (let i = 0; i < 5 && receiver.received.length < 3; i++) await after.container.deliveries.tick();
      const at = (path: string) => receiver.received.find((r) => r.url === path)!;
      expect(verifyMemoryEventSignature({ payload: at('/legacy-g9').body, signature: at('/legacy-g9').headers['x-service-signature'], secret: legacy[0]!.secret })).toBe(true);
      expect(verifyMemoryEventSignature({ payload: at('/new-g9').body, signature: at('/new-g9').headers['x-service-signature'], secret: created })).toBe(true);
      expect(verifyMnemoSignature({ payload: at('/legacy-g10').body, header: at('/legacy-g10').headers['x-service-signature']!, secret: legacy[1]!.secret, now: new Date() })).toBe(true);
    } finally {
      await after.close();
    }

    // A third start finds nothing to seal and changes nothing.
    const third = await createTestApp({ env: env() });
    try {
      const again = await third.container.storage.webhooks.sealedSecrets(null, 100);
      expect(again).toEqual(sealed);
      expect(again.map((r) => r.context.at(-1))).toEqual(expect.arrayContaining(legacy.map((w) => w.id)));
      expect(again).toHaveLength(3);
    } finally {
      await third.close();
    }
  });
});
