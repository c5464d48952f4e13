import type { IdempotencyRepository } from '../../../core/events/idempotency.repository.ts';
import type { SqliteDb } from './sqlite.database.ts';
import type { SqliteOutbox } from './sqlite-outbox.ts';

interface IdempotencyRow { request_hash: string; response: string; created_at: number }

export function createSqliteIdempotencyRepository(db: SqliteDb, outbox: SqliteOutbox): IdempotencyRepository {
  const find = db.prepare<[string, string, string], IdempotencyRow>(
    'SELECT request_hash, response, created_at FROM idempotency_keys WHERE tenant_id = ? AND mode = ? AND key = ?');
  const remove = db.prepare('DELETE FROM idempotency_keys WHERE tenant_id = ? AND mode = ? AND key = ?');
  const insert = db.prepare(`INSERT INTO idempotency_keys (tenant_id, mode, key, request_hash, response, created_at)
    VALUES (?, ?, ?, ?, ?, ?)`);
  const prune = db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?');

  const appendOnce = db.transaction((...[ref, write, events]: Parameters<IdempotencyRepository['appendEventOnce']>) => {
    const row = find.get(ref.tenantId, ref.mode, ref.key);
    if (row && row.created_at >= write.notBefore.getTime()) {
      return { kind: 'existing' as const, record: { requestHash: row.request_hash, response: row.response, createdAt: new Date(row.created_at) } };
    }
    if (row) remove.run(ref.tenantId, ref.mode, ref.key);
    insert.run(ref.tenantId, ref.mode, ref.key, write.requestHash, write.response, write.at.getTime());
    return { kind: 'appended' as const, events: outbox.appendInTx(events) };
  });

  return {
    async appendEventOnce(ref, write, events) {
      // IMMEDIATE: take the write lock before reading, so another process cannot answer the same key in between.
      const result = appendOnce.immediate(ref, write, events);
      if (result.kind === 'appended') outbox.notify(result.events);
      return result;
    },
    async prune(olderThan) {
      return prune.run(olderThan.getTime()).changes;
    },
  };
}
