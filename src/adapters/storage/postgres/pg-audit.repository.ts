import { canonicalMetadata, linkAuditRow } from '../../../core/audit/audit.hash.ts';
import { nextAuditHead, type SignedAuditHead, type StoredAuditHead } from '../../../core/audit/audit.head.ts';
import type { AuditRepository } from '../../../core/audit/audit.repository.ts';
import type { AuditFilter, AuditMetadata, AuditOutcome, AuditOwner, AuditRow } from '../../../core/audit/audit.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { pgInt, pgTime, SqlParams, type PgExecutor, type PgQueryable } from './pg-executor.ts';

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

interface HeadDbRow {
  tenant_id: string; mode: string; seq: number | string; hash: string; key_id: string | null; signed_at: Date | null; mac: string | null;
}

const toHead = (r: HeadDbRow): StoredAuditHead => {
  const owner = { tenantId: r.tenant_id, mode: r.mode as KeyMode };
  const seq = pgInt(r.seq);
  return r.mac === null || r.key_id === null || r.signed_at === null
    ? { owner, seq, hash: r.hash, keyId: null, signedAt: null, mac: null }
    : { owner, seq, hash: r.hash, keyId: r.key_id, signedAt: r.signed_at, mac: r.mac };
};

/** The statement that stores a signed head (replacing the chain's), its parameters from `$first` on. */
const putHead = (first: number) => `INSERT INTO audit_heads (tenant_id, mode, seq, hash, key_id, signed_at, mac)
  VALUES (${Array.from({ length: 7 }, (_, i) => `$${first + i}`).join(', ')})
  ON CONFLICT (tenant_id, mode) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, key_id = EXCLUDED.key_id,
    signed_at = EXCLUDED.signed_at, mac = EXCLUDED.mac`;
const headParams = (h: SignedAuditHead) => [h.owner.tenantId, h.owner.mode, h.seq, h.hash, h.keyId, pgTime(h.signedAt), h.mac];

/** Takes the chain's append lock (until the transaction ends), then reads its last row and its stored head. */
async function lockChain(tx: PgQueryable, owner: AuditOwner) {
  const key = [owner.tenantId, owner.mode];
  // The lock key hashes the chain's name as a JSON array: unambiguous, and apart from other advisory locks' keys.
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended(json_build_array('audit_logs', $1::text, $2::text)::text, 0))", key);
  const [last] = await tx.query<{ seq: number | string; hash: string }>(
    'SELECT seq, hash FROM audit_logs WHERE tenant_id = $1 AND mode = $2 ORDER BY seq DESC LIMIT 1', key);
  const [stored] = await tx.query<HeadDbRow>('SELECT * FROM audit_heads WHERE tenant_id = $1 AND mode = $2', key);
  return { last: last ? { seq: pgInt(last.seq), hash: last.hash } : null, stored: stored ? toHead(stored) : null };
}

/** Heads read at a time when rewriting them (each then rewritten in a transaction of its own). */
const REVISE_PAGE = 500;

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
 * The audit log: each tenant + mode's hash chain and its signed head. Appends to one chain (and rewrites of its head)
 * are serialised by a transaction-level advisory lock keyed on the chain, taken before its head is read and held
 * until the new row commits: under READ COMMITTED (PostgreSQL's default, which the event outbox assumes too) the
 * head read after the lock sees the previous holder's committed row, so two nodes appending at once make one chain. The primary key (tenant, mode, seq) is
 * the backstop: a duplicate seq fails the append instead of forking the chain. Chains of different owners do not
 * wait for each other.
 */
export function createPgAuditRepository(db: PgExecutor): AuditRepository {
  return {
    async append(entry, signer) {
      return db.transaction(async (tx) => {
        const { last, stored } = await lockChain(tx, entry.owner);
        const row = linkAuditRow(entry, last);
        const next = nextAuditHead(stored, last, row, signer);
        // The row and, when there is one, the new head in one statement.
        await tx.query(`${next ? 'WITH added AS (' : ''}INSERT INTO audit_logs (tenant_id, mode, seq, id, created_at, user_id, key_id,
          action, resource, outcome, status, ip, user_agent, region, request_id, metadata, prev_hash, hash)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)${next ? `) ${putHead(19)}` : ''}`,
        [row.owner.tenantId, row.owner.mode, row.seq, row.id, pgTime(row.timestamp), row.actor.userId, row.actor.keyId, row.action,
          row.resource, row.outcome, row.status, row.ip, row.userAgent, row.region, row.requestId, canonicalMetadata(row.metadata),
          row.prevHash, row.hash, ...(next ? headParams(next) : [])]);
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
    async head(owner) {
      const [row] = await db.query<HeadDbRow>('SELECT * FROM audit_heads WHERE tenant_id = $1 AND mode = $2', [owner.tenantId, owner.mode]);
      return row ? toHead(row) : null;
    },
    async heads(after, limit) {
      return (await headPage('all', after, limit)).map(toHead);
    },
    async reviseHeads(which, revise) {
      let written = 0;
      for (let after: AuditOwner | null = null; ;) {
        const page = await headPage(which, after, REVISE_PAGE);
        for (const r of page) {
          const owner = { tenantId: r.tenant_id, mode: r.mode as KeyMode };
          const wrote = await db.transaction(async (tx) => {
            const { last, stored } = await lockChain(tx, owner);
            const next = stored && revise(stored, last);
            if (next) await tx.query(putHead(1), headParams(next));
            return next !== null;
          });
          if (wrote) written++;
        }
        if (page.length < REVISE_PAGE) return written;
        after = { tenantId: page.at(-1)!.tenant_id, mode: page.at(-1)!.mode as KeyMode };
      }
    },
  };

  async function headPage(which: 'unsigned' | 'all', after: AuditOwner | null, limit: number): Promise<HeadDbRow[]> {
    const p = new SqlParams();
    const conditions = [
      ...(which === 'unsigned' ? ['mac IS NULL'] : []),
      ...(after === null ? [] : [`(tenant_id, mode) > (${p.add(after.tenantId)}, ${p.add(after.mode)})`]),
    ];
    return db.query<HeadDbRow>(`SELECT * FROM audit_heads ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
      ORDER BY tenant_id, mode LIMIT ${p.add(limit)}`, p.values);
  }
}
