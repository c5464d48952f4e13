import type { IdempotentRequestRef, IdempotentRequestRepository, ReserveOutcome } from '../../../core/idempotency/idempotent-request.repository.ts';
import { idempotentRecordContext } from '../../../core/idempotency/idempotent-request.repository.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { idempotentRecordRef, parseIdempotentRecordRef } from '../idempotent-record-ref.ts';
import { pgTime, type PgExecutor } from './pg-executor.ts';

interface RequestRow {
  tenant_id: string; mode: string; api_key_id: string; idempotency_key: string; reservation: string; created_at: Date;
  locked_until: Date | null; response_key_id: string | null; response_wrapped_key: string | null; response_payload: string | null;
}

const KEY = 'tenant_id = $1 AND mode = $2 AND api_key_id = $3 AND idempotency_key = $4';
const keyParams = (r: IdempotentRequestRef): string[] => [r.tenantId, r.mode, r.apiKeyId, r.key];

/** How often a reservation is tried again when the row it conflicted with was pruned before it could be read. */
const VANISHED_ROW_RETRIES = 3;

/** G11 idempotent requests: one row per key, a reservation and then its sealed answer. */
export function createPgIdempotentRequestRepository(db: PgExecutor): IdempotentRequestRepository {
  return {
    async reserve(ref, r) {
      const write = [...keyParams(ref), r.reservation, pgTime(r.at), pgTime(r.lockedUntil)];
      return db.transaction(async (tx): Promise<ReserveOutcome> => {
        for (let attempt = 0; ; attempt++) {
          // A new key: the insert wins, or waits for a racing insert to commit and then conflicts (READ COMMITTED).
          const inserted = await tx.query(`INSERT INTO idempotent_requests (tenant_id, mode, api_key_id, idempotency_key, reservation,
            created_at, locked_until) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1 AS one`, write);
          if (inserted.length > 0) return { kind: 'reserved' };
          // A key in use: its row is locked until this transaction ends, so of two callers taking over an expired
          // row, the second reads it as the first left it.
          const [row] = await tx.query<RequestRow>(`SELECT * FROM idempotent_requests WHERE ${KEY} FOR UPDATE`, keyParams(ref));
          if (!row) {
            if (attempt >= VANISHED_ROW_RETRIES) throw new Error('an idempotency key kept vanishing while it was reserved');
            continue;
          }
          const free = row.created_at.getTime() < r.notBefore.getTime()
            || (row.locked_until !== null && row.locked_until.getTime() <= r.at.getTime());
          if (free) {
            await tx.query(`UPDATE idempotent_requests SET reservation = $5, created_at = $6, locked_until = $7, response_key_id = NULL,
              response_wrapped_key = NULL, response_payload = NULL WHERE ${KEY}`, write);
            return { kind: 'reserved' };
          }
          if (row.locked_until !== null) return { kind: 'in_progress' };
          return {
            kind: 'completed', reservation: row.reservation, createdAt: row.created_at,
            sealed: { keyId: row.response_key_id!, wrappedKey: row.response_wrapped_key!, payload: row.response_payload! },
          };
        }
      });
    },
    async complete(ref, reservation, sealed) {
      const rows = await db.query(`UPDATE idempotent_requests SET locked_until = NULL, response_key_id = $6, response_wrapped_key = $7,
        response_payload = $8 WHERE ${KEY} AND reservation = $5 AND locked_until IS NOT NULL RETURNING 1 AS one`,
      [...keyParams(ref), reservation, sealed.keyId, sealed.wrappedKey, sealed.payload]);
      return rows.length > 0;
    },
    async release(ref, reservation) {
      const rows = await db.query(`DELETE FROM idempotent_requests WHERE ${KEY} AND reservation = $5 AND locked_until IS NOT NULL
        RETURNING 1 AS one`, [...keyParams(ref), reservation]);
      return rows.length > 0;
    },
    async prune(olderThan) {
      return (await db.query('DELETE FROM idempotent_requests WHERE created_at < $1 RETURNING 1 AS one', [pgTime(olderThan)])).length;
    },
    async sealedValues(after, limit) {
      const rows = after === null
        ? await db.query<RequestRow>(`SELECT * FROM idempotent_requests WHERE response_payload IS NOT NULL
            ORDER BY tenant_id, mode, api_key_id, idempotency_key LIMIT $1`, [limit])
        : await db.query<RequestRow>(`SELECT * FROM idempotent_requests WHERE response_payload IS NOT NULL
            AND (tenant_id, mode, api_key_id, idempotency_key) > ($1, $2, $3, $4)
            ORDER BY tenant_id, mode, api_key_id, idempotency_key LIMIT $5`, [...keyParams(parseIdempotentRecordRef(after)), limit]);
      return rows.map((r) => {
        const key = { tenantId: r.tenant_id, mode: r.mode as KeyMode, apiKeyId: r.api_key_id, key: r.idempotency_key, reservation: r.reservation };
        return {
          ref: idempotentRecordRef(key),
          context: idempotentRecordContext(key, r.reservation),
          sealed: { keyId: r.response_key_id!, wrappedKey: r.response_wrapped_key!, payload: r.response_payload! },
        };
      });
    },
    async rewrap(ref, sealed) {
      const key = parseIdempotentRecordRef(ref);
      await db.query(`UPDATE idempotent_requests SET response_key_id = $6, response_wrapped_key = $7, response_payload = $8
        WHERE ${KEY} AND reservation = $5 AND response_payload IS NOT NULL`,
      [...keyParams(key), key.reservation, sealed.keyId, sealed.wrappedKey, sealed.payload]);
    },
  };
}
