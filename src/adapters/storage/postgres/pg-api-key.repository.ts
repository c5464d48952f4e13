import type { ApiKeyRepository } from '../../../core/api-keys/api-key.repository.ts';
import type { ApiKeyRecord, Scope, Tier } from '../../../core/api-keys/api-key.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { pgJson, pgTime, pgTimeOrNull, type PgExecutor } from './pg-executor.ts';

interface Row {
  id: string; tenant_id: string; user_id: string; tier: string; mode: string; scopes: Scope[];
  display_prefix: string; digest: string; created_at: Date; expires_at: Date | null; revoked_at: Date | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  tier: r.tier as Tier,
  mode: r.mode as KeyMode,
  scopes: r.scopes,
  displayPrefix: r.display_prefix,
  digest: r.digest,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

export function createPgApiKeyRepository(db: PgExecutor): ApiKeyRepository {
  const one = async (sql: string, params: unknown[]) => {
    const [row] = await db.query<Row>(sql, params);
    return row ? toRecord(row) : null;
  };
  return {
    async insert(k) {
      await db.query(`INSERT INTO api_keys
        (id, tenant_id, user_id, tier, mode, scopes, display_prefix, digest, created_at, expires_at, revoked_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [k.id, k.tenantId, k.userId, k.tier, k.mode, pgJson(k.scopes), k.displayPrefix, k.digest,
        pgTime(k.createdAt), pgTimeOrNull(k.expiresAt), pgTimeOrNull(k.revokedAt)]);
    },
    findByDigest: (digest) => one('SELECT * FROM api_keys WHERE digest = $1', [digest]),
    findById: (id) => one('SELECT * FROM api_keys WHERE id = $1', [id]),
    async list(tenantId) {
      const rows = tenantId === undefined
        ? await db.query<Row>('SELECT * FROM api_keys ORDER BY created_at, id')
        : await db.query<Row>('SELECT * FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id', [tenantId]);
      return rows.map(toRecord);
    },
    async revoke(id, at) {
      const rows = await db.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id', [pgTime(at), id]);
      return rows.length > 0;
    },
  };
}
