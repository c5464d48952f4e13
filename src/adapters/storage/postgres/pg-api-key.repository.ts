import type { ApiKeyRepository } from '../../../core/api-keys/api-key.repository.ts';
import type { ApiKeyOwner, ApiKeyRecord, Permission, Tier } from '../../../core/api-keys/api-key.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { ApiKeyCache } from './pg-api-key-cache.ts';
import { pgJson, pgTime, pgTimeOrNull, type PgExecutor, type PgQueryable } from './pg-executor.ts';
import type { PgOutbox } from './pg-outbox.ts';

interface Row {
  id: string; tenant_id: string; user_id: string; name: string; tier: string; mode: string; scopes: Permission[];
  display_prefix: string; digest: string; created_at: Date; expires_at: Date | null; revoked_at: Date | null;
  replaced_by: string | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  name: r.name,
  tier: r.tier as Tier,
  mode: r.mode as KeyMode,
  scopes: r.scopes,
  displayPrefix: r.display_prefix,
  digest: r.digest,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  replacedBy: r.replaced_by,
});

const OWNER = 'tenant_id = $1 AND mode = $2';
const ownerParams = (o: ApiKeyOwner): unknown[] => [o.tenantId, o.mode];
/** Ids compare byte-wise, as in SQLite, so that both stores page an owner's keys in one order. */
const ORDER = 'created_at, id COLLATE "C"';

const insertKey = (db: PgQueryable, k: ApiKeyRecord) => db.query(`INSERT INTO api_keys
  (id, tenant_id, user_id, name, tier, mode, scopes, display_prefix, digest, created_at, expires_at, revoked_at, replaced_by)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
[k.id, k.tenantId, k.userId, k.name, k.tier, k.mode, pgJson(k.scopes), k.displayPrefix, k.digest,
  pgTime(k.createdAt), pgTimeOrNull(k.expiresAt), pgTimeOrNull(k.revokedAt), k.replacedBy]);

/**
 * API keys; a rotation's events go through the outbox in its transaction, last. With a `cache` (pg-api-key-cache.ts),
 * `findByDigest` answers from it when it can, and this node's own revocations, rotations and updates evict the key
 * before they return; other nodes' changes reach it through the listener.
 */
export function createPgApiKeyRepository(db: PgExecutor, outbox: PgOutbox, cache?: ApiKeyCache): ApiKeyRepository {
  const one = async (sql: string, params: unknown[]) => {
    const [row] = await db.query<Row>(sql, params);
    return row ? toRecord(row) : null;
  };
  return {
    async insert(k) {
      await insertKey(db, k);
    },
    async findByDigest(digest) {
      const hit = cache?.get(digest);
      if (hit) return hit;
      const token = cache?.begin();
      const record = await one('SELECT * FROM api_keys WHERE digest = $1', [digest]);
      if (record && token !== undefined) cache!.store(token, record);
      return record;
    },
    findById: (id) => one('SELECT * FROM api_keys WHERE id = $1', [id]),
    async list(tenantId) {
      const rows = tenantId === undefined
        ? await db.query<Row>('SELECT * FROM api_keys ORDER BY created_at, id')
        : await db.query<Row>('SELECT * FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id', [tenantId]);
      return rows.map(toRecord);
    },
    async revoke(id, at) {
      try {
        const rows = await db.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id', [pgTime(at), id]);
        return rows.length > 0;
      } finally {
        cache?.evict(id);
      }
    },
    find: (owner, id) => one(`SELECT * FROM api_keys WHERE ${OWNER} AND id = $3`, [...ownerParams(owner), id]),
    async listPage(owner, query) {
      // One statement: the count and the page come from one snapshot.
      const after = query.after === null ? '' : `AND (created_at, id COLLATE "C") > ($3::timestamptz, $4 COLLATE "C")`;
      const params = [...ownerParams(owner), ...(query.after === null ? [] : [pgTime(query.after.createdAt), query.after.id]), query.limit];
      const rows = await db.query<Row & { total: number }>(`SELECT k.*, c.total FROM
        (SELECT COUNT(*)::int AS total FROM api_keys WHERE ${OWNER}) c
        LEFT JOIN LATERAL (SELECT * FROM api_keys WHERE ${OWNER} ${after} ORDER BY ${ORDER} LIMIT $${params.length}) k ON true`, params);
      const items = rows.filter((r) => r.id !== null).map(toRecord);
      return { items, total: rows[0]?.total ?? 0 };
    },
    async update(owner, id, changes) {
      try {
        return await one(`UPDATE api_keys SET name = COALESCE($4, name), scopes = COALESCE($5::jsonb, scopes)
          WHERE ${OWNER} AND id = $3 RETURNING *`,
        [...ownerParams(owner), id, changes.name ?? null, changes.scopes === undefined ? null : pgJson(changes.scopes)]);
      } finally {
        cache?.evict(id);
      }
    },
    async rotate(owner, id, replacement, oldExpiresAt, at, events = []) {
      // Evicted even when the transaction fails: its COMMIT may have reached the server.
      const stored = await db.transaction(async (tx) => {
        // Only a live key is retired; a concurrent rotation waits for the row lock, then matches nothing.
        const retired = await tx.query(`UPDATE api_keys SET replaced_by = $4, expires_at = $5
          WHERE ${OWNER} AND id = $3 AND revoked_at IS NULL AND replaced_by IS NULL AND (expires_at IS NULL OR expires_at > $6)
          RETURNING id`, [...ownerParams(owner), id, replacement.id, pgTime(oldExpiresAt), pgTime(at)]);
        if (retired.length === 0) return null;
        await insertKey(tx, replacement);
        return outbox.appendInTx(tx, events);
      }).finally(() => cache?.evict(id));
      if (stored === null) return false;
      outbox.notify(stored);
      return true;
    },
  };
}
