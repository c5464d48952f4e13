import type { ApiKeyRepository } from '../../../core/api-keys/api-key.repository.ts';
import type { ApiKeyOwner, ApiKeyRecord, Permission, Tier } from '../../../core/api-keys/api-key.types.ts';
import type { NewEvent, StoredEvent } from '../../../core/events/event.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SqliteOutbox } from './sqlite-outbox.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface Row {
  id: string; tenant_id: string; user_id: string; name: string; tier: string; mode: string; scopes: string;
  display_prefix: string; digest: string; created_at: number; expires_at: number | null; revoked_at: number | null;
  replaced_by: string | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  name: r.name,
  tier: r.tier as Tier,
  mode: r.mode as KeyMode,
  scopes: JSON.parse(r.scopes) as Permission[],
  displayPrefix: r.display_prefix,
  digest: r.digest,
  createdAt: new Date(r.created_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
  revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
  replacedBy: r.replaced_by,
});

const OWNER = 'tenant_id = ? AND mode = ?';
const ownerParams = (o: ApiKeyOwner): [string, string] => [o.tenantId, o.mode];

/** API keys; a rotation's events go through the outbox in its transaction. */
export function createSqliteApiKeyRepository(db: SqliteDb, outbox: SqliteOutbox): ApiKeyRepository {
  const insert = db.prepare(`INSERT INTO api_keys
    (id, tenant_id, user_id, name, tier, mode, scopes, display_prefix, digest, created_at, expires_at, revoked_at, replaced_by)
    VALUES (@id, @tenant_id, @user_id, @name, @tier, @mode, @scopes, @display_prefix, @digest, @created_at, @expires_at,
      @revoked_at, @replaced_by)`);
  const byDigest = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE digest = ?');
  const byId = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE id = ?');
  const all = db.prepare<[], Row>('SELECT * FROM api_keys ORDER BY created_at, id');
  const ofTenant = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id');
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const owned = db.prepare<[string, string, string], Row>(`SELECT * FROM api_keys WHERE ${OWNER} AND id = ?`);
  const count = db.prepare<[string, string], number>(`SELECT COUNT(*) FROM api_keys WHERE ${OWNER}`).pluck();
  const firstPage = db.prepare<[string, string, number], Row>(`SELECT * FROM api_keys WHERE ${OWNER} ORDER BY created_at, id LIMIT ?`);
  const nextPage = db.prepare<[string, string, number, string, number], Row>(`SELECT * FROM api_keys
    WHERE ${OWNER} AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`);
  const update = db.prepare<[string | null, string | null, string, string, string], Row>(`UPDATE api_keys
    SET name = COALESCE(?, name), scopes = COALESCE(?, scopes) WHERE ${OWNER} AND id = ? RETURNING *`);
  // Only a live key is retired: of two rotations racing, the second matches nothing.
  const retire = db.prepare(`UPDATE api_keys SET replaced_by = ?, expires_at = ?
    WHERE ${OWNER} AND id = ? AND revoked_at IS NULL AND replaced_by IS NULL AND (expires_at IS NULL OR expires_at > ?)`);

  const insertRow = (k: ApiKeyRecord) => insert.run({
    id: k.id, tenant_id: k.tenantId, user_id: k.userId, name: k.name, tier: k.tier, mode: k.mode,
    scopes: JSON.stringify(k.scopes), display_prefix: k.displayPrefix, digest: k.digest,
    created_at: k.createdAt.getTime(), expires_at: k.expiresAt?.getTime() ?? null,
    revoked_at: k.revokedAt?.getTime() ?? null, replaced_by: k.replacedBy,
  });
  const rotateTx = db.transaction((owner: ApiKeyOwner, id: string, replacement: ApiKeyRecord, oldExpiresAt: Date, at: Date,
    events: readonly NewEvent[]): StoredEvent[] | null => {
    if (retire.run(replacement.id, oldExpiresAt.getTime(), ...ownerParams(owner), id, at.getTime()).changes === 0) return null;
    insertRow(replacement);
    return outbox.appendInTx(events);
  });
  const pageTx = db.transaction((owner: ApiKeyOwner, limit: number, after: { createdAt: Date; id: string } | null) => ({
    // One read transaction: the count and the page see the same keys.
    total: count.get(...ownerParams(owner))!,
    rows: after === null ? firstPage.all(...ownerParams(owner), limit)
      : nextPage.all(...ownerParams(owner), after.createdAt.getTime(), after.id, limit),
  }));

  return {
    async insert(k) {
      insertRow(k);
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
    async find(owner, id) {
      const row = owned.get(...ownerParams(owner), id);
      return row ? toRecord(row) : null;
    },
    async listPage(owner, query) {
      const { total, rows } = pageTx(owner, query.limit, query.after);
      return { items: rows.map(toRecord), total };
    },
    async update(owner, id, changes) {
      const row = update.get(changes.name ?? null, changes.scopes === undefined ? null : JSON.stringify(changes.scopes), ...ownerParams(owner), id);
      return row ? toRecord(row) : null;
    },
    async rotate(owner, id, replacement, oldExpiresAt, at, events = []) {
      // IMMEDIATE: the write lock is taken before the check, so a rotation on another connection waits its turn.
      const stored = rotateTx.immediate(owner, id, replacement, oldExpiresAt, at, events);
      if (stored === null) return false;
      outbox.notify(stored);
      return true;
    },
  };
}
