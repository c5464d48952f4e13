import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { migratePostgres, PG_MIGRATIONS } from '../../src/adapters/storage/postgres/pg-migrations.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { MIGRATIONS } from '../../src/adapters/storage/sqlite/migrations.ts';
import { migrateSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { SealedValue } from '../../src/core/secrets/secret.types.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import type { Webhook } from '../../src/core/webhooks/webhook.types.ts';
import { fileDatabase, type FileDatabase, useFreshSchema } from '../support/pglite.ts';

/**
 * A store written before G11 webhooks existed (every migration before the one that admits kind 'g11', a sealed G10
 * webhook with a delivery still pending) opened by this version: the webhook and its delivery are kept as they were,
 * and G11 webhooks can be stored beside it.
 */
const G11_KIND = 'webhooks of G11 (kind g11)';
const before = <M extends { name: string }>(all: readonly M[]): M[] => all.slice(0, all.findIndex((m) => m.name === G11_KIND));

const at = new Date(Date.UTC(2026, 0, 1));
const sealed: SealedValue = { keyId: 'k1', wrappedKey: 'd2hr', payload: 'c2VjcmV0' };
const g10: Webhook = {
  id: 'whk_before', kind: 'g10', scope: { tenantId: 't-old', mode: 'live', workspace: null }, url: 'https://example.com/old',
  events: ['transfer.completed'], description: 'payouts', status: 'active', retryPolicy: { maxAttempts: 7, backoffMultiplier: 1, maxDelayMs: 86_400_000 },
  filters: {}, createdAt: at, updatedAt: at, lastDeliveryAt: new Date(Date.UTC(2026, 0, 2)),
  stats: { totalAttempts: 2, successfulDeliveries: 1, failedDeliveries: 0 },
};
const row = [g10.id, g10.kind, g10.scope.tenantId, g10.scope.mode, g10.scope.workspace, g10.url, JSON.stringify(g10.events), g10.description,
  g10.status, JSON.stringify(g10.retryPolicy), JSON.stringify(g10.filters)];
const COLUMNS = `id, kind, tenant_id, mode, workspace, url, events, description, status, retry_policy, filters, created_at, updated_at,
  last_delivery_at, total_attempts, successful_deliveries, failed_deliveries, secret_key_id, secret_wrapped_key, secret_payload`;

async function expectUpgraded(storage: Storage): Promise<void> {
  expect(await storage.webhooks.findById(g10.scope, 'g10', g10.id)).toEqual(g10);
  const [claim] = await storage.webhooks.claimDue(new Date(Date.UTC(2030, 0, 1)), 10, 5, 1000);
  expect(claim).toMatchObject({ delivery: { id: 'dlv_before', attempts: 1 }, webhook: { id: g10.id }, event: { id: 'evt_before' }, secret: { sealed } });

  const g11: Webhook = { ...g10, id: 'whk_after', kind: 'g11', events: ['secret.created'], description: null, lastDeliveryAt: null,
    stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 } };
  await storage.webhooks.insert(g11, sealed);
  expect(await storage.webhooks.findById(g11.scope, 'g11', g11.id)).toEqual(g11);
  expect((await storage.webhooks.sealedSecrets(null, 10)).map((r) => r.context.at(-1))).toEqual([g10.id, g11.id]);
  await expect(storage.webhooks.insert({ ...g11, id: 'whk_unknown_kind', kind: 'g12' as Webhook['kind'] }, sealed)).rejects.toThrow();
}

describe('upgrading a store from before G11 webhooks', () => {
  it('SQLite: the table is rebuilt with every row and column, and admits kind g11', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-upgrade-g11-'));
    const file = join(dir, 'mnemo.db');
    try {
      const old = new Database(file);
      // The store as the version before this migration wrote it.
      migrateSqlite(old, before(MIGRATIONS));
      expect(() => old.prepare(`INSERT INTO webhooks (${COLUMNS}) VALUES (?, 'g11', ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, NULL, 0, 0, 0, 'k', 'w', 'p')`)
        .run('whk_too_early', ...row.slice(2))).toThrow(/CHECK/);
      old.prepare(`INSERT INTO webhooks (seq, ${COLUMNS}) VALUES (5, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 2, 1, 0, ?, ?, ?)`).run(
        ...row, at.getTime(), at.getTime(), g10.lastDeliveryAt!.getTime(), sealed.keyId, sealed.wrappedKey, sealed.payload);
      old.prepare(`INSERT INTO events (id, tenant_id, mode, workspace, type, data, created_at) VALUES ('evt_before', ?, ?, NULL, 'transfer.completed', '{}', ?)`)
        .run(g10.scope.tenantId, g10.scope.mode, at.getTime());
      old.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, attempts, state, next_attempt_at, created_at)
        VALUES ('dlv_before', ?, 1, 1, 'pending', ?, ?)`).run(g10.id, at.getTime(), at.getTime());
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

    it('the kind constraint is widened in place', async () => {
      await useFreshSchema(pglite);
      const db = { ...pgliteExecutor(pglite), close: async () => undefined };
      await migratePostgres(db, before(PG_MIGRATIONS));
      await db.query(`INSERT INTO webhooks (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10::jsonb, $11::jsonb,
        $12, $13, $14, 2, 1, 0, $15, $16, $17)`, [...row, at.toISOString(), at.toISOString(), g10.lastDeliveryAt!.toISOString(),
        sealed.keyId, sealed.wrappedKey, sealed.payload]);
      const [event] = await db.query<{ seq: number | string }>(`INSERT INTO events (id, tenant_id, mode, workspace, type, data, created_at)
        VALUES ('evt_before', $1, $2, NULL, 'transfer.completed', '{}'::jsonb, $3) RETURNING seq`, [g10.scope.tenantId, g10.scope.mode, at.toISOString()]);
      await db.query(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, attempts, state, next_attempt_at, created_at)
        VALUES ('dlv_before', $1, $2, 1, 'pending', $3, $3)`, [g10.id, Number(event!.seq), at.toISOString()]);
      await expectUpgraded(await createPostgresStorage(db));
    });
  });
});
