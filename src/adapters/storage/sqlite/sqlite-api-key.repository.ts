import type { ApiKeyRepository } from '../../../core/api-keys/api-key.repository.ts';
import type { ApiKeyRecord, Scope, Tier } from '../../../core/api-keys/api-key.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface Row {
  id: string; tenant_id: string; user_id: string; tier: string; mode: string; scopes: string;
  display_prefix: string; digest: string; created_at: number; expires_at: number | null; revoked_at: number | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  tier: r.tier as Tier,
  mode: r.mode as KeyMode,
  scopes: JSON.parse(r.scopes) as Scope[],
  displayPrefix: r.display_prefix,
  digest: r.digest,
  createdAt: new Date(r.created_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
  revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
});

export function createSqliteApiKeyRepository(db: SqliteDb): ApiKeyRepository {
  const insert = db.prepare(`INSERT INTO api_keys
    (id, tenant_id, user_id, tier, mode, scopes, display_prefix, digest, created_at, expires_at, revoked_at)
    VALUES (@id, @tenant_id, @user_id, @tier, @mode, @scopes, @display_prefix, @digest, @created_at, @expires_at,
      @revoked_at)`);
  const byDigest = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE digest = ?');
  const byId = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE id = ?');
  const all = db.prepare<[], Row>('SELECT * FROM api_keys ORDER BY created_at, id');
  const ofTenant = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id');
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');

  return {
    async insert(k) {
      insert.run({
        id: k.id, tenant_id: k.tenantId, user_id: k.userId, tier: k.tier, mode: k.mode,
        scopes: JSON.stringify(k.scopes), display_prefix: k.displayPrefix, digest: k.digest,
        created_at: k.createdAt.getTime(), expires_at: k.expiresAt?.getTime() ?? null,
        revoked_at: k.revokedAt?.getTime() ?? null,
      });
    },
    async findByDigest(digest) {
      const row = byDigest.get(digest);
      return row ? toRecord(row) : null;
    },
    async findById(id) {
      const row = byId.get(id);
      return row ? toRecord(row) : null;
    },
    async list(tenantId) {
      return (tenantId === undefined ? all.all() : ofTenant.all(tenantId)).map(toRecord);
    },
    async revoke(id, at) {
      return revoke.run(at.getTime(), id).changes > 0;
    },
  };
}
