import { canonicalMetadata, linkAuditRow } from '../../../core/audit/audit.hash.ts';
import type { AuditRepository } from '../../../core/audit/audit.repository.ts';
import type { AuditFilter, AuditMetadata, AuditOutcome, AuditOwner, AuditRow } from '../../../core/audit/audit.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { pgInt, pgTime, SqlParams, type PgExecutor } from './pg-executor.ts';

interface AuditDbRow {
  tenant_id: string; mode: string; seq: number | string; id: string; created_at: Date; user_id: string; key_id: string | null;
  action: string; resource: string; outcome: string; status: number; ip: string | null; user_agent: string | null;
  region: string | null; request_id: string | null; metadata: string; prev_hash: string; hash: string;
}

const toRow = (r: AuditDbRow): AuditRow => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  seq: pgInt(r.seq),
  timestamp: r.created_at,
  actor: { userId: r.user_id, keyId: r.key_id },
  action: r.action,
  resource: r.resource,
  outcome: r.outcome as AuditOutcome,
  status: r.status,
  ip: r.ip,
  userAgent: r.user_agent,
  region: r.region,
  requestId: r.request_id,
  metadata: JSON.parse(r.metadata) as AuditMetadata,
  prevHash: r.prev_hash,
  hash: r.hash,
});

/** The WHERE clause of an owner's rows matching `filter`; its parameters go into `p`. */
function matching(owner: AuditOwner, filter: AuditFilter, p: SqlParams): string {
  let where = `tenant_id = ${p.add(owner.tenantId)} AND mode = ${p.add(owner.mode)}`;
  if (filter.actor !== undefined) where += ` AND (user_id = ${p.add(filter.actor)} OR key_id = ${p.add(filter.actor)})`;
  if (filter.action !== undefined) {
    // A prefix compared as text, not LIKE: `_` in an action is a plain character.
    where += 'exact' in filter.action
      ? ` AND action = ${p.add(filter.action.exact)}`
      : ` AND substr(action, 1, ${p.add(filter.action.prefix.length)}::integer) = ${p.add(filter.action.prefix)}`;
  }
  if (filter.resource !== undefined) where += ` AND resource = ${p.add(filter.resource)}`;
  if (filter.region !== undefined) where += ` AND region = ${p.add(filter.region)}`;
  if (filter.from !== undefined) where += ` AND created_at >= ${p.add(pgTime(filter.from))}::timestamptz`;
  if (filter.to !== undefined) where += ` AND created_at < ${p.add(pgTime(filter.to))}::timestamptz`;
  return where;
}

/**
 * The audit log: each tenant + mode's hash chain. Appends to one chain are serialised by a transaction-level advisory
 * lock keyed on the chain, taken before its head is read and held until the new row commits: under READ COMMITTED
 * (PostgreSQL's default, which the event outbox assumes too) the head read after the lock sees the previous
 * holder's committed row, so two nodes appending at once make one chain. The primary key (tenant, mode, seq) is
 * the backstop: a duplicate seq fails the append instead of forking the chain. Chains of different owners do not
 * wait for each other.
 */
export function createPgAuditRepository(db: PgExecutor): AuditRepository {
  return {
    async append(entry) {
      return db.transaction(async (tx) => {
        const owner = [entry.owner.tenantId, entry.owner.mode];
        // The lock key hashes the chain's name as a JSON array: unambiguous, and apart from other advisory locks' keys.
        await tx.query("SELECT pg_advisory_xact_lock(hashtextextended(json_build_array('audit_logs', $1::text, $2::text)::text, 0))", owner);
        const [head] = await tx.query<{ seq: number | string; hash: string }>(
          'SELECT seq, hash FROM audit_logs WHERE tenant_id = $1 AND mode = $2 ORDER BY seq DESC LIMIT 1', owner);
        const row = linkAuditRow(entry, head ? { seq: pgInt(head.seq), hash: head.hash } : null);
        await tx.query(`INSERT INTO audit_logs (tenant_id, mode, seq, id, created_at, user_id, key_id, action, resource, outcome,
          status, ip, user_agent, region, request_id, metadata, prev_hash, hash)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
        [row.owner.tenantId, row.owner.mode, row.seq, row.id, pgTime(row.timestamp), row.actor.userId, row.actor.keyId, row.action,
          row.resource, row.outcome, row.status, row.ip, row.userAgent, row.region, row.requestId, canonicalMetadata(row.metadata),
          row.prevHash, row.hash]);
        return row;
      });
    },
    async findById(owner, id) {
      const [row] = await db.query<AuditDbRow>('SELECT * FROM audit_logs WHERE tenant_id = $1 AND mode = $2 AND id = $3',
        [owner.tenantId, owner.mode, id]);
      return row ? toRow(row) : null;
    },
    async list(owner, query) {
      // Two statements, as the secrets list: a row appended between them can make total one more than the pages show.
      const p = new SqlParams();
      const where = matching(owner, query.filter, p);
      const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM audit_logs WHERE ${where}`, p.values);
      const past = query.afterSeq === null ? '' : ` AND seq ${query.order === 'desc' ? '<' : '>'} ${p.add(query.afterSeq)}`;
      const rows = await db.query<AuditDbRow>(`SELECT * FROM audit_logs WHERE ${where}${past}
        ORDER BY seq ${query.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ${p.add(query.limit)}`, p.values);
      return { items: rows.map(toRow), total: count!.n };
    },
    async scan(after, limit) {
      const p = new SqlParams();
      const where = after === null ? '' : `WHERE (tenant_id, mode, seq) > (${p.add(after.tenantId)}, ${p.add(after.mode)}, ${p.add(after.seq)})`;
      const rows = await db.query<AuditDbRow>(`SELECT * FROM audit_logs ${where} ORDER BY tenant_id, mode, seq LIMIT ${p.add(limit)}`, p.values);
      return rows.map(toRow);
    },
  };
}
