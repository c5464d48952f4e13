import { DomainError } from '../../../core/errors.ts';
import type { McpApprovalListQuery, McpApprovalRepository } from '../../../core/mcp-access/mcp-approval.repository.ts';
import type { McpApprovalStatus, McpOperation, McpOwner, StoredMcpApproval } from '../../../core/mcp-access/mcp.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { isUniqueViolation } from './sqlite-errors.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface Row {
  id: string; tenant_id: string; mode: string; resource_id: string; resource: string; operation: string; reason: string;
  requested_by: string; requested_at: number; expires_at: number; status: string; responded_by: string | null;
  responded_at: number | null; response_reason: string | null; auto_approved: number; token_digest: string | null;
}

const toApproval = (r: Row): StoredMcpApproval => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  resourceId: r.resource_id,
  resource: r.resource,
  operation: r.operation as McpOperation,
  reason: r.reason,
  requestedBy: r.requested_by,
  requestedAt: new Date(r.requested_at),
  expiresAt: new Date(r.expires_at),
  status: r.status as McpApprovalStatus,
  respondedBy: r.responded_by,
  respondedAt: r.responded_at === null ? null : new Date(r.responded_at),
  responseReason: r.response_reason,
  autoApproved: r.auto_approved === 1,
  tokenDigest: r.token_digest,
});

const OWNER = 'tenant_id = ? AND mode = ?';
const ownerParams = (o: McpOwner): [string, string] => [o.tenantId, o.mode];

/** The condition of a status as it reads at `now` (a pending row past expires_at is expired), and its parameters. */
function statusIs(status: McpApprovalStatus, now: number): { sql: string; params: unknown[] } {
  switch (status) {
    case 'pending': return { sql: "status = 'pending' AND expires_at > ?", params: [now] };
    case 'expired': return { sql: "(status = 'expired' OR (status = 'pending' AND expires_at <= ?))", params: [now] };
    default: return { sql: 'status = ?', params: [status] };
  }
}

/** MCP approvals; every state change is one conditional statement, so concurrent answers cannot both be stored. */
export function createSqliteMcpApprovalRepository(db: SqliteDb): McpApprovalRepository {
  const expireStale = db.prepare(`UPDATE mcp_approvals SET status = 'expired'
    WHERE ${OWNER} AND requested_by = ? AND resource = ? AND status = 'pending' AND expires_at <= ?`);
  const insert = db.prepare(`INSERT INTO mcp_approvals (id, tenant_id, mode, resource_id, resource, operation, reason, requested_by,
    requested_at, expires_at, status, responded_by, responded_at, response_reason, auto_approved, token_digest)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const pendingOf = db.prepare<[string, string, string, string], string>(`SELECT id FROM mcp_approvals
    WHERE ${OWNER} AND requested_by = ? AND resource = ? AND status = 'pending'`).pluck();
  const byId = db.prepare<[string, string, string], Row>(`SELECT * FROM mcp_approvals WHERE ${OWNER} AND id = ?`);
  const byDigest = db.prepare<[string, string, string], Row>(`SELECT * FROM mcp_approvals WHERE ${OWNER} AND token_digest = ?`);
  const answer = db.prepare<unknown[], Row>(`UPDATE mcp_approvals SET status = ?, responded_by = ?, responded_at = ?,
    response_reason = ?, token_digest = ? WHERE ${OWNER} AND id = ? AND status = 'pending' AND expires_at > ? RETURNING *`);
  const expire = db.prepare(`UPDATE mcp_approvals SET status = 'expired'
    WHERE ${OWNER} AND id = ? AND status = 'pending' AND expires_at <= ?`);

  const insertTx = db.transaction((a: StoredMcpApproval, now: Date) => {
    expireStale.run(...ownerParams(a.owner), a.requestedBy, a.resource, now.getTime());
    insert.run(a.id, a.owner.tenantId, a.owner.mode, a.resourceId, a.resource, a.operation, a.reason, a.requestedBy,
      a.requestedAt.getTime(), a.expiresAt.getTime(), a.status, a.respondedBy, a.respondedAt?.getTime() ?? null, a.responseReason,
      a.autoApproved ? 1 : 0, a.tokenDigest);
  });

  return {
    async insert(a, now) {
      try {
        // IMMEDIATE: the write lock is taken before the stale rows are read, so a request on another connection waits.
        insertTx.immediate(a, now);
      } catch (err) {
        if (!isUniqueViolation(err, 'mcp_approvals.requested_by')) throw err;
        const existing = pendingOf.get(...ownerParams(a.owner), a.requestedBy, a.resource);
        throw new DomainError('CONFLICT', `${a.requestedBy} already has a pending approval of ${a.resource} (${existing ?? 'just answered'})`, {
          field: 'resource', ...(existing === undefined ? {} : { approvalId: existing }),
        });
      }
    },
    async find(owner, id) {
      const row = byId.get(...ownerParams(owner), id);
      return row ? toApproval(row) : null;
    },
    async findByTokenDigest(owner, digest) {
      const row = byDigest.get(...ownerParams(owner), digest);
      return row ? toApproval(row) : null;
    },
    async respond(owner, id, a) {
      const row = answer.get(a.status, a.respondedBy, a.respondedAt.getTime(), a.responseReason, a.tokenDigest, ...ownerParams(owner), id,
        a.respondedAt.getTime());
      return row ? toApproval(row) : null;
    },
    async expire(owner, id, now) {
      expire.run(...ownerParams(owner), id, now.getTime());
      const row = byId.get(...ownerParams(owner), id);
      return row ? toApproval(row) : null;
    },
    async list(owner, query: McpApprovalListQuery) {
      let where = OWNER;
      const params: unknown[] = [...ownerParams(owner)];
      if (query.status !== undefined) {
        const s = statusIs(query.status, query.now.getTime());
        where += ` AND ${s.sql}`;
        params.push(...s.params);
      }
      if (query.resource !== undefined) {
        where += ' AND resource = ?';
        params.push(query.resource);
      }
      if (query.requestedBy !== undefined) {
        where += ' AND requested_by = ?';
        params.push(query.requestedBy);
      }
      const read = db.transaction(() => {
        const total = db.prepare(`SELECT COUNT(*) FROM mcp_approvals WHERE ${where}`).pluck().get(...params) as number;
        const past = query.after === null ? '' : ' AND (requested_at, id) < (?, ?)';
        const rows = db.prepare<unknown[], Row>(`SELECT * FROM mcp_approvals WHERE ${where}${past}
          ORDER BY requested_at DESC, id DESC LIMIT ?`)
          .all(...params, ...(query.after === null ? [] : [query.after.requestedAt.getTime(), query.after.id]), query.limit);
        return { items: rows.map(toApproval), total };
      });
      return read();
    },
  };
}
