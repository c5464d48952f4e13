import type { KeyMode } from '../../../core/scope.ts';
import {
  duplicateSecretName, parseSecretVersionRef, secretVersionRef, staleSecretVersion, type SecretRepository,
} from '../../../core/secrets/secret.repository.ts';
import {
  secretVersionContext, type SealedRef, type SealedValue, type SecretOwner, type SecretVersionChanges, type StoredSecret,
  type StoredSecretVersion,
} from '../../../core/secrets/secret.types.ts';
import type { NewEvent } from '../../../core/events/event.types.ts';
import { isUniqueViolation } from './sqlite-errors.ts';
import type { SqliteOutbox } from './sqlite-outbox.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface SecretRow {
  id: string; tenant_id: string; mode: string; name: string; tags: string; version: number; created_at: number;
  updated_at: number; expires_at: number | null; region: string | null; created_by: string; updated_by: string;
}
interface VersionColumns { v_version: number; key_id: string; wrapped_key: string; payload: string; v_created_at: number; v_created_by: string }
interface SealedRow extends VersionColumns { secret_id: string; tenant_id: string; mode: string; name: string }

const toSecret = (r: SecretRow): StoredSecret => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  name: r.name,
  tags: JSON.parse(r.tags) as string[],
  version: r.version,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
  region: r.region,
  createdBy: r.created_by,
  updatedBy: r.updated_by,
});
const toSealed = (r: { key_id: string; wrapped_key: string; payload: string }): SealedValue =>
  ({ keyId: r.key_id, wrappedKey: r.wrapped_key, payload: r.payload });
const toVersion = (r: VersionColumns): StoredSecretVersion =>
  ({ version: r.v_version, sealed: toSealed(r), createdAt: new Date(r.v_created_at), createdBy: r.v_created_by });

/** A version's columns under names that do not clash with the secret's (see VersionColumns). */
const VERSION_COLUMNS = `v.version AS v_version, v.key_id, v.wrapped_key, v.payload, v.created_at AS v_created_at,
  v.created_by AS v_created_by`;
const OWNER = 's.tenant_id = ? AND s.mode = ?';
const ownerParams = (o: SecretOwner): [string, string] => [o.tenantId, o.mode];


/**
 * Secrets, their sealed versions and the master-key checks; names compare byte-wise (SQLite's BINARY collation). A
 * creation's events go through the outbox in its transaction.
 */
export function createSqliteSecretRepository(db: SqliteDb, outbox: SqliteOutbox): SecretRepository {
  const insertSecret = db.prepare(`INSERT INTO secrets (id, tenant_id, mode, name, tags, version, created_at, updated_at,
    expires_at, region, created_by, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertVersion = db.prepare(`INSERT INTO secret_versions (secret_id, version, key_id, wrapped_key, payload, created_at,
    created_by) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  // One statement, so the secret and its version are read from one snapshot (another process may be writing).
  const find = db.prepare<[number | null, string, string, string], SecretRow & VersionColumns>(`SELECT s.*, ${VERSION_COLUMNS}
    FROM secrets s JOIN secret_versions v ON v.secret_id = s.id AND v.version = COALESCE(?, s.version)
    WHERE ${OWNER} AND s.name = ?`);
  const exists = db.prepare<[string, string, string], { id: string }>(`SELECT s.id FROM secrets s WHERE ${OWNER} AND s.name = ?`);
  const bump = db.prepare<[number, string, number | null, string | null, number, string, string, string, string, number], SecretRow>(
    `UPDATE secrets AS s SET version = ?, tags = ?, expires_at = ?, region = ?, updated_at = ?, updated_by = ?
     WHERE ${OWNER} AND s.name = ? AND s.version = ? RETURNING *`);
  const prune = db.prepare(`DELETE FROM secret_versions WHERE secret_id = ? AND version NOT IN
    (SELECT version FROM secret_versions WHERE secret_id = ? ORDER BY version DESC LIMIT ?)`);
  const remove = db.prepare(`DELETE FROM secrets AS s WHERE ${OWNER} AND s.name = ?`);
  const sealedFrom = (where: string) => db.prepare<unknown[], SealedRow>(`SELECT v.secret_id, s.tenant_id, s.mode, s.name,
    ${VERSION_COLUMNS} FROM secret_versions v JOIN secrets s ON s.id = v.secret_id ${where}
    ORDER BY v.secret_id, v.version LIMIT ?`);
  const sealedFirst = sealedFrom('');
  const sealedAfter = sealedFrom('WHERE (v.secret_id, v.version) > (?, ?)');
  const rewrap = db.prepare('UPDATE secret_versions SET key_id = ?, wrapped_key = ?, payload = ? WHERE secret_id = ? AND version = ?');
  const keyCheck = db.prepare<[string], { key_id: string; wrapped_key: string; payload: string }>(
    'SELECT key_id, wrapped_key, payload FROM master_key_checks WHERE key_id = ?');
  const keyCheckIds = db.prepare<[], string>('SELECT key_id FROM master_key_checks ORDER BY key_id').pluck();
  const putKeyCheck = db.prepare(`INSERT INTO master_key_checks (key_id, wrapped_key, payload, created_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (key_id) DO NOTHING`);
  const deleteKeyCheck = db.prepare('DELETE FROM master_key_checks WHERE key_id = ?');

  const writeVersion = (secretId: string, v: StoredSecretVersion) => insertVersion.run(secretId, v.version, v.sealed.keyId,
    v.sealed.wrappedKey, v.sealed.payload, v.createdAt.getTime(), v.createdBy);

  const createTx = db.transaction((s: StoredSecret, first: StoredSecretVersion, events: readonly NewEvent[]) => {
    insertSecret.run(s.id, s.owner.tenantId, s.owner.mode, s.name, JSON.stringify(s.tags), s.version, s.createdAt.getTime(),
      s.updatedAt.getTime(), s.expiresAt?.getTime() ?? null, s.region, s.createdBy, s.updatedBy);
    writeVersion(s.id, first);
    return outbox.appendInTx(events);
  });

  const addVersionTx = db.transaction((owner: SecretOwner, name: string, expected: number, next: StoredSecretVersion,
    changes: SecretVersionChanges, keep: number): SecretRow | null => {
    // The version check and the write are one statement: of two writers that read the same version, one matches.
    const row = bump.get(next.version, JSON.stringify(changes.tags), changes.expiresAt?.getTime() ?? null, changes.region,
      changes.updatedAt.getTime(), changes.updatedBy, ...ownerParams(owner), name, expected);
    if (!row) {
      if (exists.get(...ownerParams(owner), name)) throw staleSecretVersion(name, expected);
      return null;
    }
    writeVersion(row.id, next);
    prune.run(row.id, row.id, keep);
    return row;
  });

  return {
    async create(secret, first, events = []) {
      let stored;
      try {
        stored = createTx(secret, first, events);
      } catch (err) {
        if (isUniqueViolation(err, 'secrets.name')) throw duplicateSecretName(secret.name);
        throw err;
      }
      outbox.notify(stored);
    },
    async find(owner, name, version) {
      const row = find.get(version ?? null, ...ownerParams(owner), name);
      return row ? { secret: toSecret(row), version: toVersion(row) } : null;
    },
    async addVersion(owner, name, expected, next, changes, keep) {
      if (next.version !== expected + 1) throw new Error(`secret version ${next.version} does not follow version ${expected}`);
      // IMMEDIATE: the write lock is taken before the first statement, so a writer on another connection waits its turn.
      const row = addVersionTx.immediate(owner, name, expected, next, changes, keep);
      return row ? toSecret(row) : null;
    },
    async delete(owner, name) {
      // The versions go with it (ON DELETE CASCADE).
      return remove.run(...ownerParams(owner), name).changes > 0;
    },
    async list(owner, query) {
      let where = `${OWNER} AND (s.expires_at IS NULL OR s.expires_at > ?)`;
      const params: unknown[] = [...ownerParams(owner), query.now.getTime()];
      if (query.tagsAny.length > 0) {
        where += ` AND EXISTS (SELECT 1 FROM json_each(s.tags) WHERE value IN (${query.tagsAny.map(() => '?').join(', ')}))`;
        params.push(...query.tagsAny);
      }
      if (query.region !== undefined) {
        where += ' AND s.region = ?';
        params.push(query.region);
      }
      const read = db.transaction(() => {
        const total = db.prepare(`SELECT COUNT(*) FROM secrets s WHERE ${where}`).pluck().get(...params) as number;
        const page = query.afterName === null ? '' : ' AND s.name > ?';
        const rows = db.prepare<unknown[], SecretRow>(`SELECT s.* FROM secrets s WHERE ${where}${page} ORDER BY s.name LIMIT ?`)
          .all(...params, ...(query.afterName === null ? [] : [query.afterName]), query.limit);
        return { items: rows.map(toSecret), total };
      });
      return read();
    },
    async sealedValues(after, limit) {
      const rows = after === null ? sealedFirst.all(limit) : sealedAfter.all(...parseSecretVersionRef(after), limit);
      return rows.map((r): SealedRef => ({
        ref: secretVersionRef(r.secret_id, r.v_version),
        context: secretVersionContext({ tenantId: r.tenant_id, mode: r.mode as KeyMode }, r.name, r.v_version),
        sealed: toSealed(r),
      }));
    },
    async rewrap(ref, sealed) {
      rewrap.run(sealed.keyId, sealed.wrappedKey, sealed.payload, ...parseSecretVersionRef(ref));
    },
    async keyCheck(keyId) {
      const row = keyCheck.get(keyId);
      return row ? toSealed(row) : null;
    },
    async keyCheckIds() {
      return keyCheckIds.all();
    },
    async putKeyCheck(keyId, sealed) {
      if (sealed.keyId !== keyId) throw new Error(`the check value of master key ${keyId} is sealed under ${sealed.keyId}`);
      putKeyCheck.run(keyId, sealed.wrappedKey, sealed.payload, Date.now());
    },
    async deleteKeyCheck(keyId) {
      return deleteKeyCheck.run(keyId).changes > 0;
    },
  };
}
