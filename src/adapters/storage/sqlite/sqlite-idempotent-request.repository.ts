import type { IdempotentRequestRef, IdempotentRequestRepository, ReserveOutcome } from '../../../core/idempotency/idempotent-request.repository.ts';
import { idempotentRecordContext } from '../../../core/idempotency/idempotent-request.repository.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SealedRef } from '../../../core/secrets/secret.types.ts';
import { idempotentRecordRef, parseIdempotentRecordRef } from '../idempotent-record-ref.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface RequestRow {
  tenant_id: string; mode: string; api_key_id: string; idempotency_key: string; reservation: string; created_at: number;
  locked_until: number | null; response_key_id: string | null; response_wrapped_key: string | null; response_payload: string | null;
}

const KEY = 'tenant_id = ? AND mode = ? AND api_key_id = ? AND idempotency_key = ?';
const keyParams = (r: IdempotentRequestRef): [string, string, string, string] => [r.tenantId, r.mode, r.apiKeyId, r.key];

/** G11 idempotent requests: one row per key, a reservation and then its sealed answer. */
export function createSqliteIdempotentRequestRepository(db: SqliteDb): IdempotentRequestRepository {
  const find = db.prepare<[string, string, string, string], RequestRow>(`SELECT * FROM idempotent_requests WHERE ${KEY}`);
  const upsert = db.prepare(`INSERT INTO idempotent_requests (tenant_id, mode, api_key_id, idempotency_key, reservation, created_at,
    locked_until) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, mode, api_key_id, idempotency_key) DO UPDATE SET
    reservation = excluded.reservation, created_at = excluded.created_at, locked_until = excluded.locked_until,
    response_key_id = NULL, response_wrapped_key = NULL, response_payload = NULL`);
  const complete = db.prepare(`UPDATE idempotent_requests SET locked_until = NULL, response_key_id = ?, response_wrapped_key = ?,
    response_payload = ? WHERE ${KEY} AND reservation = ? AND locked_until IS NOT NULL`);
  const release = db.prepare(`DELETE FROM idempotent_requests WHERE ${KEY} AND reservation = ? AND locked_until IS NOT NULL`);
  const prune = db.prepare('DELETE FROM idempotent_requests WHERE created_at < ?');
  const sealedFrom = (where: string) => db.prepare<unknown[], RequestRow>(`SELECT * FROM idempotent_requests
    WHERE response_payload IS NOT NULL ${where} ORDER BY tenant_id, mode, api_key_id, idempotency_key LIMIT ?`);
  const sealedFirst = sealedFrom('');
  const sealedAfter = sealedFrom('AND (tenant_id, mode, api_key_id, idempotency_key) > (?, ?, ?, ?)');
  const rewrap = db.prepare(`UPDATE idempotent_requests SET response_key_id = ?, response_wrapped_key = ?, response_payload = ?
    WHERE ${KEY} AND reservation = ? AND response_payload IS NOT NULL`);

  const reserveTx = db.transaction((...[ref, r]: Parameters<IdempotentRequestRepository['reserve']>): ReserveOutcome => {
    const row = find.get(...keyParams(ref));
    const free = !row || row.created_at < r.notBefore.getTime() || (row.locked_until !== null && row.locked_until <= r.at.getTime());
    if (free) {
      upsert.run(...keyParams(ref), r.reservation, r.at.getTime(), r.lockedUntil.getTime());
      return { kind: 'reserved' };
    }
    if (row.locked_until !== null) return { kind: 'in_progress' };
    return {
      kind: 'completed', reservation: row.reservation, createdAt: new Date(row.created_at),
      sealed: { keyId: row.response_key_id!, wrappedKey: row.response_wrapped_key!, payload: row.response_payload! },
    };
  });

  return {
    async reserve(ref, reservation) {
      // IMMEDIATE: the write lock is taken before the read, so another connection cannot reserve the key in between.
      return reserveTx.immediate(ref, reservation);
    },
    async complete(ref, reservation, sealed) {
      return complete.run(sealed.keyId, sealed.wrappedKey, sealed.payload, ...keyParams(ref), reservation).changes > 0;
    },
    async release(ref, reservation) {
      return release.run(...keyParams(ref), reservation).changes > 0;
    },
    async prune(olderThan) {
      return prune.run(olderThan.getTime()).changes;
    },
    async sealedValues(after, limit) {
      const rows = after === null ? sealedFirst.all(limit) : sealedAfter.all(...keyParams(parseIdempotentRecordRef(after)), limit);
      return rows.map((r): SealedRef => {
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
      rewrap.run(sealed.keyId, sealed.wrappedKey, sealed.payload, ...keyParams(key), key.reservation);
    },
  };
}
