import { DomainError } from '../../../core/errors.ts';
import type { McpApprovalRepository } from '../../../core/mcp-access/mcp-approval.repository.ts';
import type { McpApprovalStatus, McpOperation, McpOwner, StoredMcpApproval } from '../../../core/mcp-access/mcp.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { isPgUniqueViolation, pgTime, pgTimeOrNull, SqlParams, type PgExecutor } from './pg-executor.ts';

interface Row {
  id: string; tenant_id: string; mode: string; resource_id: string; resource: string; operation: string; reason: string;
  requested_by: string; requested_at: Date; expires_at: Date; status: string; responded_by: string | null;
  responded_at: Date | null; response_reason: string | null; auto_approved: number; token_digest: string | null;
}

const toApproval = (r: Row): StoredMcpApproval => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  resourceId: r.resource_id,
  resource: r.resource,
  operation: r.operation as McpOperation,
  reason: r.reason,
  requestedBy: r.requested_by,
  requestedAt: r.requested_at,
  expiresAt: r.expires_at,
  status: r.status as McpApprovalStatus,
  respondedBy: r.responded_by,
  respondedAt: r.responded_at,
  responseReason: r.response_reason,
  autoApproved: r.auto_approved === 1,
  tokenDigest: r.token_digest,
});

const OWNER = 'tenant_id = $1 AND mode = $2';
const ownerParams = (o: McpOwner): unknown[] => [o.tenantId, o.mode];

/** The condition of a status as it reads at `now` (a pending row past expires_at is expired); parameters go into `p`. */
function statusIs(status: McpApprovalStatus, now: Date, p: SqlParams): string {
  switch (status) {
    case 'pending': return `status = 'pending' AND expires_at > ${p.add(pgTime(now))}::timestamptz`;
    case 'expired': return `(status = 'expired' OR (status = 'pending' AND expires_at <= ${p.add(pgTime(now))}::timestamptz))`;
    default: return `status = ${p.add(status)}`;
  }
}

/**
 * MCP approvals. An answer is one conditional UPDATE: a concurrent one waits for the row lock, then re-checks
 * `status = 'pending'` (READ COMMITTED) and matches nothing. Concurrent requests meet at the partial unique index.
 */
export function createPgMcpApprovalRepository(db: PgExecutor): McpApprovalRepository {
  const one = async (sql: string, params: unknown[]) => {
    const [row] = await db.query<Row>(sql, params);
    return row ? toApproval(row) : null;
  };
  return {
    async insert(a, now) {
      try {
        await db.transaction(async (tx) => {
          await tx.query(`UPDATE mcp_approvals SET status = 'expired'
            WHERE ${OWNER} AND requested_by = $3 AND resource = $4 AND status = 'pending' AND expires_at <= $5`,
          [...ownerParams(a.owner), a.requestedBy, a.resource, pgTime(now)]);
          await tx.query(`INSERT INTO mcp_approvals (id, tenant_id, mode, resource_id, resource, operation, reason, requested_by,
            requested_at, expires_at, status, responded_by, responded_at, response_reason, auto_approved, token_digest)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
          [a.id, a.owner.tenantId, a.owner.mode, a.resourceId, a.resource, a.operation, a.reason, a.requestedBy, pgTime(a.requestedAt),
            pgTime(a.expiresAt), a.status, a.respondedBy, pgTimeOrNull(a.respondedAt), a.responseReason, a.autoApproved ? 1 : 0, a.tokenDigest]);
        });
      } catch (err) {
        if (!isPgUniqueViolation(err, 'mcp_approvals_one_pending')) throw err;
        const [existing] = await db.query<{ id: string }>(`SELECT id FROM mcp_approvals
          WHERE ${OWNER} AND requested_by = $3 AND resource = $4 AND status = 'pending'`, [...ownerParams(a.owner), a.requestedBy, a.resource]);
        throw new DomainError('CONFLICT', `${a.requestedBy} already has a pending approval of ${a.resource} (${existing?.id ?? 'just answered'})`, {
          field: 'resource', ...(existing === undefined ? {} : { approvalId: existing.id }),
        });
      }
    },
    find: (owner, id) => one(`SELECT * FROM mcp_approvals WHERE ${OWNER} AND id = $3`, [...ownerParams(owner), id]),
    findByTokenDigest: (owner, digest) => one(`SELECT * FROM mcp_approvals WHERE ${OWNER} AND token_digest = $3`, [...ownerParams(owner), digest]),
    respond: (owner, id, a) => one(`UPDATE mcp_approvals SET status = $4, responded_by = $5, responded_at = $6, response_reason = $7,
      token_digest = $8 WHERE ${OWNER} AND id = $3 AND status = 'pending' AND expires_at > $6 RETURNING *`,
    [...ownerParams(owner), id, a.status, a.respondedBy, pgTime(a.respondedAt), a.responseReason, a.tokenDigest]),
    async expire(owner, id, now) {
      await db.query(`UPDATE mcp_approvals SET status = 'expired' WHERE ${OWNER} AND id = $3 AND status = 'pending' AND expires_at <= $4`,
        [...ownerParams(owner), id, pgTime(now)]);
      return one(`SELECT * FROM mcp_approvals WHERE ${OWNER} AND id = $3`, [...ownerParams(owner), id]);
    },
    async list(owner, query) {
      const p = new SqlParams(ownerParams(owner));
      let where = OWNER;
      if (query.status !== undefined) where += ` AND ${statusIs(query.status, query.now, p)}`;
      if (query.resource !== undefined) where += ` AND resource = ${p.add(query.resource)}`;
      if (query.requestedBy !== undefined) where += ` AND requested_by = ${p.add(query.requestedBy)}`;
      // Two statements, as the secrets list: an approval made between them can make total one more than the pages show.
      const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM mcp_approvals WHERE ${where}`, p.values);
      const past = query.after === null ? ''
        : ` AND (requested_at, id COLLATE "C") < (${p.add(pgTime(query.after.requestedAt))}::timestamptz, ${p.add(query.after.id)})`;
      const rows = await db.query<Row>(`SELECT * FROM mcp_approvals WHERE ${where}${past}
        ORDER BY requested_at DESC, id COLLATE "C" DESC LIMIT ${p.add(query.limit)}`, p.values);
      return { items: rows.map(toApproval), total: count!.n };
    },
  };
}
