import type { IdempotencyRepository } from '../../../core/events/idempotency.repository.ts';
import { pgTime, type PgExecutor } from './pg-executor.ts';
import type { PgOutbox } from './pg-outbox.ts';

interface IdempotencyRow { request_hash: string; response: string; created_at: Date }

export function createPgIdempotencyRepository(db: PgExecutor, outbox: PgOutbox): IdempotencyRepository {
  return {
    async appendEventOnce(ref, write, events) {
      const result = await db.transaction(async (tx) => {
        const key = [ref.tenantId, ref.mode, ref.key];
        // Two requests racing with one key serialise here (a row lock cannot cover a row not yet there).
        // The lock key hashes the three parts as a JSON array: unambiguous, and PostgreSQL text cannot hold chr(0).
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended(json_build_array($1::text, $2::text, $3::text)::text, 0))', key);
        const [row] = await tx.query<IdempotencyRow>(
          'SELECT request_hash, response, created_at FROM idempotency_keys WHERE tenant_id = $1 AND mode = $2 AND key = $3', key);
        if (row && row.created_at.getTime() >= write.notBefore.getTime()) {
          return { kind: 'existing' as const, record: { requestHash: row.request_hash, response: row.response, createdAt: row.created_at } };
        }
        await tx.query(`INSERT INTO idempotency_keys (tenant_id, mode, key, request_hash, response, created_at)
          VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, mode, key)
          DO UPDATE SET request_hash = EXCLUDED.request_hash, response = EXCLUDED.response, created_at = EXCLUDED.created_at`,
        [...key, write.requestHash, write.response, pgTime(write.at)]);
        return { kind: 'appended' as const, events: await outbox.appendInTx(tx, events) };
      });
      if (result.kind === 'appended') outbox.notify(result.events);
      return result;
    },
    async prune(olderThan) {
      return (await db.query('DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING key', [pgTime(olderThan)])).length;
    },
  };
}
