import type { KeyMode } from '../../../core/scope.ts';
import {
  duplicateSecretName, parseSecretVersionRef, secretVersionRef, staleSecretVersion, type SecretRepository,
} from '../../../core/secrets/secret.repository.ts';
import {
  secretVersionContext, type SealedValue, type SecretOwner, type StoredSecret, type StoredSecretVersion,
} from '../../../core/secrets/secret.types.ts';
import { isPgUniqueViolation, pgTime, pgTimeOrNull, SqlParams, type PgExecutor, type PgQueryable } from './pg-executor.ts';
import type { PgOutbox } from './pg-outbox.ts';

interface SecretRow {
  id: string; tenant_id: string; mode: string; name: string; tags: string[]; version: number; created_at: Date;
  updated_at: Date; expires_at: Date | null; region: string | null; created_by: string; updated_by: string;
}
interface VersionColumns { v_version: number; key_id: string; wrapped_key: string; payload: string; v_created_at: Date; v_created_by: string }
interface SealedRow extends VersionColumns { secret_id: string; tenant_id: string; mode: string; name: string }

const toSecret = (r: SecretRow): StoredSecret => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  name: r.name,
  tags: r.tags,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  expiresAt: r.expires_at,
  region: r.region,
  createdBy: r.created_by,
  updatedBy: r.updated_by,
});
const toSealed = (r: { key_id: string; wrapped_key: string; payload: string }): SealedValue =>
  ({ keyId: r.key_id, wrappedKey: r.wrapped_key, payload: r.payload });
const toVersion = (r: VersionColumns): StoredSecretVersion =>
  ({ version: r.v_version, sealed: toSealed(r), createdAt: r.v_created_at, createdBy: r.v_created_by });

/** A version's columns under names that do not clash with the secret's (see VersionColumns). */
const VERSION_COLUMNS = `v.version AS v_version, v.key_id, v.wrapped_key, v.payload, v.created_at AS v_created_at,
  v.created_by AS v_created_by`;
const OWNER = 's.tenant_id = $1 AND s.mode = $2';
const ownerParams = (o: SecretOwner): unknown[] => [o.tenantId, o.mode];


const insertVersion = (tx: PgQueryable, secretId: string, v: StoredSecretVersion) => tx.query(`INSERT INTO secret_versions
  (secret_id, version, key_id, wrapped_key, payload, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
[secretId, v.version, v.sealed.keyId, v.sealed.wrappedKey, v.sealed.payload, pgTime(v.createdAt), v.createdBy]);

/**
 * Secrets, their sealed versions and the master-key checks; names compare byte-wise (the columns are COLLATE "C"). A
 * creation's events go through the outbox in its transaction, last (the outbox's lock is held only to the commit).
 */
export function createPgSecretRepository(db: PgExecutor, outbox: PgOutbox): SecretRepository {
  return {
    async create(s, first, events = []) {
      let stored;
      try {
        stored = await db.transaction(async (tx) => {
          await tx.query(`INSERT INTO secrets (id, tenant_id, mode, name, tags, version, created_at, updated_at, expires_at,
            region, created_by, updated_by) VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9, $10, $11, $12)`,
          [s.id, s.owner.tenantId, s.owner.mode, s.name, s.tags, s.version, pgTime(s.createdAt), pgTime(s.updatedAt),
            pgTimeOrNull(s.expiresAt), s.region, s.createdBy, s.updatedBy]);
          await insertVersion(tx, s.id, first);
          return outbox.appendInTx(tx, events);
        });
      } catch (err) {
        if (isPgUniqueViolation(err, 'secrets_owner_name')) throw duplicateSecretName(s.name);
        throw err;
      }
      outbox.notify(stored);
    },
    async find(owner, name, version) {
      // One statement, so the secret and its version come from one snapshot.
      const [row] = await db.query<SecretRow & VersionColumns>(`SELECT s.*, ${VERSION_COLUMNS} FROM secrets s
        JOIN secret_versions v ON v.secret_id = s.id AND v.version = COALESCE($4::integer, s.version)
        WHERE ${OWNER} AND s.name = $3`, [...ownerParams(owner), name, version ?? null]);
      return row ? { secret: toSecret(row), version: toVersion(row) } : null;
    },
    async addVersion(owner, name, expected, next, changes, keep) {
      if (next.version !== expected + 1) throw new Error(`secret version ${next.version} does not follow version ${expected}`);
      const row = await db.transaction(async (tx) => {
        // The version check and the write are one statement: a concurrent writer waits for the row lock, then sees
        // the new version and matches nothing.
        const [updated] = await tx.query<SecretRow>(`UPDATE secrets AS s SET version = $5, tags = $6::text[], expires_at = $7,
          region = $8, updated_at = $9, updated_by = $10 WHERE ${OWNER} AND s.name = $3 AND s.version = $4 RETURNING *`,
        [...ownerParams(owner), name, expected, next.version, changes.tags, pgTimeOrNull(changes.expiresAt), changes.region,
          pgTime(changes.updatedAt), changes.updatedBy]);
        if (!updated) {
          const [found] = await tx.query(`SELECT 1 AS one FROM secrets s WHERE ${OWNER} AND s.name = $3`, [...ownerParams(owner), name]);
          if (found) throw staleSecretVersion(name, expected);
          return null;
        }
        await insertVersion(tx, updated.id, next);
        await tx.query(`DELETE FROM secret_versions WHERE secret_id = $1 AND version NOT IN
          (SELECT version FROM secret_versions WHERE secret_id = $1 ORDER BY version DESC LIMIT $2)`, [updated.id, keep]);
        return updated;
      });
      return row ? toSecret(row) : null;
    },
    async delete(owner, name) {
      // The versions go with it (ON DELETE CASCADE).
      const rows = await db.query(`DELETE FROM secrets AS s WHERE ${OWNER} AND s.name = $3 RETURNING s.id`, [...ownerParams(owner), name]);
      return rows.length > 0;
    },
    async list(owner, query) {
      const p = new SqlParams(ownerParams(owner));
      let where = `${OWNER} AND (s.expires_at IS NULL OR s.expires_at > ${p.add(pgTime(query.now))}::timestamptz)`;
      if (query.tagsAny.length > 0) where += ` AND s.tags && ${p.add(query.tagsAny)}::text[]`;
      if (query.region !== undefined) where += ` AND s.region = ${p.add(query.region)}`;
      const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM secrets s WHERE ${where}`, p.values);
      if (query.afterName !== null) where += ` AND s.name > ${p.add(query.afterName)}`;
      const rows = await db.query<SecretRow>(`SELECT s.* FROM secrets s WHERE ${where} ORDER BY s.name LIMIT ${p.add(query.limit)}`,
        p.values);
      return { items: rows.map(toSecret), total: count!.n };
    },
    async sealedValues(after, limit) {
      const p = new SqlParams();
      const where = after === null ? '' : `WHERE (v.secret_id, v.version) > (${parseSecretVersionRef(after).map((x) => p.add(x)).join(', ')})`;
      const rows = await db.query<SealedRow>(`SELECT v.secret_id, s.tenant_id, s.mode, s.name, ${VERSION_COLUMNS}
        FROM secret_versions v JOIN secrets s ON s.id = v.secret_id ${where} ORDER BY v.secret_id, v.version LIMIT ${p.add(limit)}`,
      p.values);
      return rows.map((r) => ({
        ref: secretVersionRef(r.secret_id, r.v_version),
        context: secretVersionContext({ tenantId: r.tenant_id, mode: r.mode as KeyMode }, r.name, r.v_version),
        sealed: toSealed(r),
      }));
    },
    async rewrap(ref, sealed) {
      const [secretId, version] = parseSecretVersionRef(ref);
      await db.query('UPDATE secret_versions SET key_id = $1, wrapped_key = $2, payload = $3 WHERE secret_id = $4 AND version = $5',
        [sealed.keyId, sealed.wrappedKey, sealed.payload, secretId, version]);
    },
    async keyCheck(keyId) {
      const [row] = await db.query<{ key_id: string; wrapped_key: string; payload: string }>(
        'SELECT key_id, wrapped_key, payload FROM master_key_checks WHERE key_id = $1', [keyId]);
      return row ? toSealed(row) : null;
    },
    async keyCheckIds() {
      return (await db.query<{ key_id: string }>('SELECT key_id FROM master_key_checks ORDER BY key_id')).map((r) => r.key_id);
    },
    async putKeyCheck(keyId, sealed) {
      if (sealed.keyId !== keyId) throw new Error(`the check value of master key ${keyId} is sealed under ${sealed.keyId}`);
      await db.query(`INSERT INTO master_key_checks (key_id, wrapped_key, payload, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (key_id) DO NOTHING`, [keyId, sealed.wrappedKey, sealed.payload, pgTime(new Date())]);
    },
    async deleteKeyCheck(keyId) {
      return (await db.query('DELETE FROM master_key_checks WHERE key_id = $1 RETURNING key_id', [keyId])).length > 0;
    },
  };
}
