import { DomainError } from '../../../core/errors.ts';
import type { McpResourceRepository } from '../../../core/mcp-access/mcp-resource.repository.ts';
import {
  mcpResourceValueContext, type AutoApprove, type McpOperation, type McpOwner, type McpResourceType, type StoredMcpResource,
} from '../../../core/mcp-access/mcp.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { isPgUniqueViolation, pgJson, pgTime, pgTimeOrNull, SqlParams, type PgExecutor } from './pg-executor.ts';

interface Row {
  id: string; tenant_id: string; mode: string; uri: string; type: string; name: string; description: string; permissions: McpOperation[];
  requires_approval: number; approvers: string[]; auto_approve: AutoApprove; value_key_id: string | null; value_wrapped_key: string | null;
  value_payload: string | null; created_at: Date; created_by: string; accessed_at: Date | null; access_count: number;
}

const toResource = (r: Row): StoredMcpResource => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  uri: r.uri,
  type: r.type as McpResourceType,
  name: r.name,
  description: r.description,
  permissions: r.permissions,
  requiresApproval: r.requires_approval === 1,
  approvers: r.approvers,
  autoApprove: r.auto_approve,
  sealedValue: r.value_key_id === null ? null : { keyId: r.value_key_id, wrappedKey: r.value_wrapped_key!, payload: r.value_payload! },
  createdAt: r.created_at,
  createdBy: r.created_by,
  accessedAt: r.accessed_at,
  accessCount: r.access_count,
});

const OWNER = 'tenant_id = $1 AND mode = $2';
const ownerParams = (o: McpOwner): unknown[] => [o.tenantId, o.mode];

/** MCP resource registrations; ids and URIs compare byte-wise (COLLATE "C"), as in SQLite. */
export function createPgMcpResourceRepository(db: PgExecutor): McpResourceRepository {
  return {
    async insert(r) {
      try {
        await db.query(`INSERT INTO mcp_resources (id, tenant_id, mode, uri, type, name, description, permissions, requires_approval,
          approvers, auto_approve, value_key_id, value_wrapped_key, value_payload, created_at, created_by, accessed_at, access_count)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb, $11::jsonb, $12, $13, $14, $15, $16, $17, $18)`,
        [r.id, r.owner.tenantId, r.owner.mode, r.uri, r.type, r.name, r.description, pgJson(r.permissions), r.requiresApproval ? 1 : 0,
          pgJson(r.approvers), pgJson(r.autoApprove), r.sealedValue?.keyId ?? null, r.sealedValue?.wrappedKey ?? null,
          r.sealedValue?.payload ?? null, pgTime(r.createdAt), r.createdBy, pgTimeOrNull(r.accessedAt), r.accessCount]);
      } catch (err) {
        if (isPgUniqueViolation(err, 'mcp_resources_owner_uri')) {
          throw new DomainError('CONFLICT', `An MCP resource with the URI ${r.uri} already exists`, { field: 'uri' });
        }
        throw err;
      }
    },
    async findByUris(owner, uris) {
      if (uris.length === 0) return [];
      const rows = await db.query<Row>(`SELECT * FROM mcp_resources WHERE ${OWNER} AND uri = ANY($3::text[])`, [...ownerParams(owner), uris]);
      return rows.map(toResource);
    },
    async findById(owner, id) {
      const [row] = await db.query<Row>(`SELECT * FROM mcp_resources WHERE ${OWNER} AND id = $3`, [...ownerParams(owner), id]);
      return row ? toResource(row) : null;
    },
    async list(owner, query) {
      // Two statements, as the secrets list: a registration made between them can make total one more than the pages show.
      const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM mcp_resources WHERE ${OWNER}`, ownerParams(owner));
      const p = new SqlParams(ownerParams(owner));
      const after = query.afterUri === null ? '' : ` AND uri > ${p.add(query.afterUri)}`;
      const rows = await db.query<Row>(`SELECT * FROM mcp_resources WHERE ${OWNER}${after} ORDER BY uri LIMIT ${p.add(query.limit)}`, p.values);
      return { items: rows.map(toResource), total: count!.n };
    },
    async update(r) {
      const rows = await db.query<{ id: string }>(`UPDATE mcp_resources SET name = $4, description = $5, permissions = $6::jsonb,
        requires_approval = $7, approvers = $8::jsonb, auto_approve = $9::jsonb, value_key_id = $10, value_wrapped_key = $11,
        value_payload = $12 WHERE ${OWNER} AND id = $3 RETURNING id`,
      [...ownerParams(r.owner), r.id, r.name, r.description, pgJson(r.permissions), r.requiresApproval ? 1 : 0, pgJson(r.approvers),
        pgJson(r.autoApprove), r.sealedValue?.keyId ?? null, r.sealedValue?.wrappedKey ?? null, r.sealedValue?.payload ?? null]);
      return rows.length > 0;
    },
    async delete(owner, id) {
      // One statement: its approvals (which reference it) and the registration go together.
      const rows = await db.query<{ id: string }>(`WITH approvals AS (DELETE FROM mcp_approvals WHERE ${OWNER} AND resource_id = $3)
        DELETE FROM mcp_resources WHERE ${OWNER} AND id = $3 RETURNING id`, [...ownerParams(owner), id]);
      return rows.length > 0;
    },
    async recordAccess(owner, id, at) {
      const [row] = await db.query<{ accessed_at: Date; access_count: number }>(`UPDATE mcp_resources
        SET accessed_at = $4, access_count = access_count + 1 WHERE ${OWNER} AND id = $3 RETURNING accessed_at, access_count`,
      [...ownerParams(owner), id, pgTime(at)]);
      return row ? { accessedAt: row.accessed_at, accessCount: row.access_count } : null;
    },
    async sealedValues(after, limit) {
      const p = new SqlParams();
      const where = after === null ? '' : ` AND id > ${p.add(after)}`;
      const rows = await db.query<Row>(`SELECT * FROM mcp_resources WHERE value_key_id IS NOT NULL${where} ORDER BY id LIMIT ${p.add(limit)}`,
        p.values);
      return rows.map((r) => {
        const resource = toResource(r);
        return { ref: r.id, context: mcpResourceValueContext(resource.owner, r.id), sealed: resource.sealedValue! };
      });
    },
    async rewrap(ref, sealed) {
      await db.query(`UPDATE mcp_resources SET value_key_id = $1, value_wrapped_key = $2, value_payload = $3
        WHERE id = $4 AND value_key_id IS NOT NULL`, [sealed.keyId, sealed.wrappedKey, sealed.payload, ref]);
    },
  };
}
