import { DomainError } from '../../../core/errors.ts';
import type { McpResourceRepository } from '../../../core/mcp-access/mcp-resource.repository.ts';
import {
  mcpResourceValueContext, type AutoApprove, type McpOperation, type McpOwner, type McpResourceType, type StoredMcpResource,
} from '../../../core/mcp-access/mcp.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SealedRef } from '../../../core/secrets/secret.types.ts';
import { isUniqueViolation } from './sqlite-errors.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface Row {
  id: string; tenant_id: string; mode: string; uri: string; type: string; name: string; description: string; permissions: string;
  requires_approval: number; approvers: string; auto_approve: string; value_key_id: string | null; value_wrapped_key: string | null;
  value_payload: string | null; created_at: number; created_by: string; accessed_at: number | null; access_count: number;
}

const toResource = (r: Row): StoredMcpResource => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  uri: r.uri,
  type: r.type as McpResourceType,
  name: r.name,
  description: r.description,
  permissions: JSON.parse(r.permissions) as McpOperation[],
  requiresApproval: r.requires_approval === 1,
  approvers: JSON.parse(r.approvers) as string[],
  autoApprove: JSON.parse(r.auto_approve) as AutoApprove,
  sealedValue: r.value_key_id === null ? null : { keyId: r.value_key_id, wrappedKey: r.value_wrapped_key!, payload: r.value_payload! },
  createdAt: new Date(r.created_at),
  createdBy: r.created_by,
  accessedAt: r.accessed_at === null ? null : new Date(r.accessed_at),
  accessCount: r.access_count,
});

const OWNER = 'tenant_id = ? AND mode = ?';
const ownerParams = (o: McpOwner): [string, string] => [o.tenantId, o.mode];

/** MCP resource registrations; URIs compare byte-wise (SQLite's BINARY collation). */
export function createSqliteMcpResourceRepository(db: SqliteDb): McpResourceRepository {
  const insert = db.prepare(`INSERT INTO mcp_resources (id, tenant_id, mode, uri, type, name, description, permissions,
    requires_approval, approvers, auto_approve, value_key_id, value_wrapped_key, value_payload, created_at, created_by, accessed_at,
    access_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const byId = db.prepare<[string, string, string], Row>(`SELECT * FROM mcp_resources WHERE ${OWNER} AND id = ?`);
  const count = db.prepare<[string, string], number>(`SELECT COUNT(*) FROM mcp_resources WHERE ${OWNER}`).pluck();
  const firstPage = db.prepare<[string, string, number], Row>(`SELECT * FROM mcp_resources WHERE ${OWNER} ORDER BY uri LIMIT ?`);
  const nextPage = db.prepare<[string, string, string, number], Row>(`SELECT * FROM mcp_resources WHERE ${OWNER} AND uri > ?
    ORDER BY uri LIMIT ?`);
  const access = db.prepare<[number, string, string, string], { accessed_at: number; access_count: number }>(`UPDATE mcp_resources
    SET accessed_at = ?, access_count = access_count + 1 WHERE ${OWNER} AND id = ? RETURNING accessed_at, access_count`);
  const update = db.prepare(`UPDATE mcp_resources SET name = ?, description = ?, permissions = ?, requires_approval = ?, approvers = ?,
    auto_approve = ?, value_key_id = ?, value_wrapped_key = ?, value_payload = ? WHERE ${OWNER} AND id = ?`);
  const removeApprovals = db.prepare(`DELETE FROM mcp_approvals WHERE ${OWNER} AND resource_id = ?`);
  const removeResource = db.prepare(`DELETE FROM mcp_resources WHERE ${OWNER} AND id = ?`);
  // The approvals first: they reference the registration.
  const remove = db.transaction((owner: McpOwner, id: string) => {
    removeApprovals.run(...ownerParams(owner), id);
    return removeResource.run(...ownerParams(owner), id).changes > 0;
  });
  const sealedFrom = (where: string) => db.prepare<unknown[], Row>(`SELECT * FROM mcp_resources
    WHERE value_key_id IS NOT NULL ${where} ORDER BY id LIMIT ?`);
  const sealedFirst = sealedFrom('');
  const sealedAfter = sealedFrom('AND id > ?');
  const rewrap = db.prepare('UPDATE mcp_resources SET value_key_id = ?, value_wrapped_key = ?, value_payload = ? WHERE id = ? AND value_key_id IS NOT NULL');
  const page = db.transaction((owner: McpOwner, limit: number, afterUri: string | null) => ({
    // One read transaction: the count and the page see the same registrations.
    total: count.get(...ownerParams(owner))!,
    rows: afterUri === null ? firstPage.all(...ownerParams(owner), limit) : nextPage.all(...ownerParams(owner), afterUri, limit),
  }));

  return {
    async insert(r) {
      try {
        insert.run(r.id, r.owner.tenantId, r.owner.mode, r.uri, r.type, r.name, r.description, JSON.stringify(r.permissions),
          r.requiresApproval ? 1 : 0, JSON.stringify(r.approvers), JSON.stringify(r.autoApprove), r.sealedValue?.keyId ?? null,
          r.sealedValue?.wrappedKey ?? null, r.sealedValue?.payload ?? null, r.createdAt.getTime(), r.createdBy,
          r.accessedAt?.getTime() ?? null, r.accessCount);
      } catch (err) {
        if (isUniqueViolation(err, 'mcp_resources.uri')) {
          throw new DomainError('CONFLICT', `An MCP resource with the URI ${r.uri} already exists`, { field: 'uri' });
        }
        throw err;
      }
    },
    async findByUris(owner, uris) {
      if (uris.length === 0) return [];
      const rows = db.prepare<unknown[], Row>(`SELECT * FROM mcp_resources WHERE ${OWNER} AND uri IN (${uris.map(() => '?').join(', ')})`)
        .all(...ownerParams(owner), ...uris);
      return rows.map(toResource);
    },
    async findById(owner, id) {
      const row = byId.get(...ownerParams(owner), id);
      return row ? toResource(row) : null;
    },
    async list(owner, query) {
      const { total, rows } = page(owner, query.limit, query.afterUri);
      return { items: rows.map(toResource), total };
    },
    async update(r) {
      return update.run(r.name, r.description, JSON.stringify(r.permissions), r.requiresApproval ? 1 : 0, JSON.stringify(r.approvers),
        JSON.stringify(r.autoApprove), r.sealedValue?.keyId ?? null, r.sealedValue?.wrappedKey ?? null, r.sealedValue?.payload ?? null,
        ...ownerParams(r.owner), r.id).changes > 0;
    },
    async delete(owner, id) {
      return remove(owner, id);
    },
    async recordAccess(owner, id, at) {
      const row = access.get(at.getTime(), ...ownerParams(owner), id);
      return row ? { accessedAt: new Date(row.accessed_at), accessCount: row.access_count } : null;
    },
    async sealedValues(after, limit) {
      const rows = after === null ? sealedFirst.all(limit) : sealedAfter.all(after, limit);
      return rows.map((r): SealedRef => {
        const resource = toResource(r);
        return { ref: r.id, context: mcpResourceValueContext(resource.owner, r.id), sealed: resource.sealedValue! };
      });
    },
    async rewrap(ref, sealed) {
      rewrap.run(sealed.keyId, sealed.wrappedKey, sealed.payload, ref);
    },
  };
}
