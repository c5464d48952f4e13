import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFrom } from '../../src/adapters/secrets/master-keyring.ts';
import { pgliteExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { migratePostgres, PG_MIGRATIONS } from '../../src/adapters/storage/postgres/pg-migrations.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { MIGRATIONS } from '../../src/adapters/storage/sqlite/migrations.ts';
import { migrateSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { open } from '../../src/core/secrets/envelope.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { sealPlaintextWebhookSecrets, webhookSecretContext } from '../../src/core/webhooks/webhook-secret.ts';
import type { Webhook } from '../../src/core/webhooks/webhook.types.ts';
import { fileDatabase, type FileDatabase, useFreshSchema } from '../support/pglite.ts';

/**
 * A store written before signing secrets were sealed (every migration before that one, a webhook with its secret in
 * the `secret` column) opened by this version: the schema migration keeps the row and moves the secret aside, the
 * start-up sealing seals it, and deliveries carry it either way.
 */
const SEALING = 'webhook signing secrets sealed';
const before = <M extends { name: string }>(all: readonly M[]): M[] => all.slice(0, all.findIndex((m) => m.name === SEALING));

const at = new Date(Date.UTC(2026, 0, 1));
const legacy: Webhook = {
  id: 'webhook_legacy', kind: 'g9', scope: { tenantId: 't-old', mode: 'live', workspace: 'default' }, url: 'https://example.com/old',
  events: ['memory.created'], description: null, status: 'active', retryPolicy: { maxAttempts: 3, backoffMultiplier: 2, maxDelayMs: 300_000 },
  filters: { tags: ['ops'] }, createdAt: at, updatedAt: at, lastDeliveryAt: new Date(Date.UTC(2026, 0, 2)),
  stats: { totalAttempts: 4, successfulDeliveries: 3, failedDeliveries: 1 },
};
const PLAINTEXT = 'the-old-plaintext-signing-secret';
const COLUMNS = `id, kind, tenant_id, mode, workspace, url, events, secret, description, status, retry_policy, filters, created_at,
  updated_at, last_delivery_at, total_attempts, successful_deliveries, failed_deliveries`;

async function expectUpgraded(storage: Storage): Promise<void> {
  expect(await storage.webhooks.findById(legacy.scope, 'g9', legacy.id)).toEqual(legacy);
  expect(await storage.webhooks.plaintextSecrets(10)).toEqual([{ id: legacy.id, kind: 'g9', scope: legacy.scope, plaintext: PLAINTEXT }]);
  // Not yet sealed: a delivery still carries the plaintext.
  await storage.events.append([{ id: 'evt_upgrade_1', type: 'memory.created', scope: legacy.scope, createdAt: at, data: { tags: ['ops'] } }]);
  const [first] = await storage.webhooks.claimDue(new Date(Date.UTC(2030, 0, 1)), 10, 5, 1000);
  expect(first).toMatchObject({ webhook: { id: legacy.id }, secret: { plaintext: PLAINTEXT } });

  const keyring = keyringFrom([randomBytes(32)]);
  expect(await sealPlaintextWebhookSecrets(storage.webhooks, keyring)).toBe(1);
  expect(await storage.webhooks.plaintextSecrets(10)).toEqual([]);
  const [again] = await storage.webhooks.claimDue(new Date(Date.UTC(2030, 0, 2)), 10, 5, 1000);
  expect(again!.delivery.id).toBe(first!.delivery.id);
  expect('sealed' in again!.secret && open(keyring, webhookSecretContext(legacy), again!.secret.sealed)).toBe(PLAINTEXT);
  expect(await storage.webhooks.findById(legacy.scope, 'g9', legacy.id)).toEqual(legacy);
  // New webhooks go on after the old one.
  const next = { ...legacy, id: 'webhook_new' };
  await storage.webhooks.insert(next, { keyId: keyring.activeId, wrappedKey: 'd2hr', payload: 'c2Vj' });
  expect((await storage.webhooks.sealedSecrets(null, 10)).map((r) => r.context.at(-1))).toEqual([legacy.id, next.id]);
}

describe('upgrading a store whose webhook secrets are in plaintext', () => {
  it('SQLite: the table is rebuilt with every row, and the secret is sealed at the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-upgrade-'));
    const file = join(dir, 'mnemo.db');
    try {
      const old = new Database(file);
      // The store as the version before this migration wrote it.
      migrateSqlite(old, before(MIGRATIONS));
      old.prepare(`INSERT INTO webhooks (seq, ${COLUMNS}) VALUES (7, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        legacy.id, legacy.kind, legacy.scope.tenantId, legacy.scope.mode, legacy.scope.workspace, legacy.url, JSON.stringify(legacy.events),
        PLAINTEXT, legacy.description, legacy.status, JSON.stringify(legacy.retryPolicy), JSON.stringify(legacy.filters), at.getTime(),
        at.getTime(), legacy.lastDeliveryAt!.getTime(), 4, 3, 1);
      old.close();

      const storage = createSqliteStorage({ file });
      try {
        await expectUpgraded(storage);
      } finally {
        await storage.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('PostgreSQL', () => {
    let pglite: PGlite;
    let database: FileDatabase | undefined;
    beforeAll(async () => { database = await fileDatabase(); pglite = database.pglite; }, 60_000);
    afterAll(async () => { await database?.release(); });

    it('the column is renamed and relaxed, and the secret is sealed at the next start', async () => {
      await useFreshSchema(pglite);
      const db = { ...pgliteExecutor(pglite), close: async () => undefined };
      await migratePostgres(db, before(PG_MIGRATIONS));
      await db.query(`INSERT INTO webhooks (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11::jsonb, $12::jsonb,
        $13, $14, $15, 4, 3, 1)`, [legacy.id, legacy.kind, legacy.scope.tenantId, legacy.scope.mode, legacy.scope.workspace, legacy.url,
        JSON.stringify(legacy.events), PLAINTEXT, legacy.description, legacy.status, JSON.stringify(legacy.retryPolicy),
        JSON.stringify(legacy.filters), at.toISOString(), at.toISOString(), legacy.lastDeliveryAt!.toISOString()]);
      await expectUpgraded(await createPostgresStorage(db));
    });
  });
});
