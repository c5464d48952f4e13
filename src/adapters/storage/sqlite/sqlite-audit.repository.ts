import { canonicalMetadata, linkAuditRow } from '../../../core/audit/audit.hash.ts';
import { nextAuditHead, type AuditHeadSigner, type SignedAuditHead, type StoredAuditHead } from '../../../core/audit/audit.head.ts';
import type { AuditRepository } from '../../../core/audit/audit.repository.ts';
import type {
  AuditChainHead, AuditEntry, AuditFilter, AuditMetadata, AuditOutcome, AuditOwner, AuditRow,
} from '../../../core/audit/audit.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface AuditDbRow {
  tenant_id: string; mode: string; seq: number; id: string; created_at: number; user_id: string; key_id: string | null;
  action: string; resource: string; outcome: string; status: number; ip: string | null; user_agent: string | null;
  region: string | null; request_id: string | null; metadata: string; prev_hash: string; hash: string;
}

const toRow = (r: AuditDbRow): AuditRow => ({
  id: r.id,
  owner: { tenantId: r.tenant_id, mode: r.mode as KeyMode },
  seq: r.seq,
  timestamp: new Date(r.created_at),
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

interface HeadDbRow { tenant_id: string; mode: string; seq: number; hash: string; key_id: string | null; signed_at: number | null; mac: string | null }

const toHead = (r: HeadDbRow): StoredAuditHead => {
  const owner = { tenantId: r.tenant_id, mode: r.mode as KeyMode };
  return r.mac === null || r.key_id === null || r.signed_at === null
    ? { owner, seq: r.seq, hash: r.hash, keyId: null, signedAt: null, mac: null }
    : { owner, seq: r.seq, hash: r.hash, keyId: r.key_id, signedAt: new Date(r.signed_at), mac: r.mac };
};

/** The WHERE clause of an owner's rows matching `filter`, and its parameters. */
function matching(owner: AuditOwner, filter: AuditFilter): { where: string; params: unknown[] } {
  let where = 'tenant_id = ? AND mode = ?';
  const params: unknown[] = [owner.tenantId, owner.mode];
  if (filter.actor !== undefined) {
    where += ' AND (user_id = ? OR key_id = ?)';
    params.push(filter.actor, filter.actor);
  }
  if (filter.action !== undefined) {
    if ('exact' in filter.action) {
      where += ' AND action = ?';
      params.push(filter.action.exact);
    } else {
      // A prefix compared as text, not LIKE: `_` in an action is a plain character.
      where += ' AND substr(action, 1, ?) = ?';
      params.push(filter.action.prefix.length, filter.action.prefix);
    }
  }
  if (filter.resource !== undefined) {
    where += ' AND resource = ?';
    params.push(filter.resource);
  }
  if (filter.region !== undefined) {
    where += ' AND region = ?';
    params.push(filter.region);
  }
  if (filter.from !== undefined) {
    where += ' AND created_at >= ?';
    params.push(filter.from.getTime());
  }
  if (filter.to !== undefined) {
    where += ' AND created_at < ?';
    params.push(filter.to.getTime());
  }
  return { where, params };
}

/** Heads read at a time when rewriting them (each then rewritten in a transaction of its own). */
const REVISE_PAGE = 500;

/** The audit log: each tenant + mode's hash chain and its signed head, appended under SQLite's write lock. */
export function createSqliteAuditRepository(db: SqliteDb): AuditRepository {
  const lastRow = db.prepare<[string, string], { seq: number; hash: string }>(
    'SELECT seq, hash FROM audit_logs WHERE tenant_id = ? AND mode = ? ORDER BY seq DESC LIMIT 1');
  const insert = db.prepare(`INSERT INTO audit_logs (tenant_id, mode, seq, id, created_at, user_id, key_id, action, resource,
    outcome, status, ip, user_agent, region, request_id, metadata, prev_hash, hash)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const byId = db.prepare<[string, string, string], AuditDbRow>('SELECT * FROM audit_logs WHERE tenant_id = ? AND mode = ? AND id = ?');
  const scanFirst = db.prepare<[number], AuditDbRow>('SELECT * FROM audit_logs ORDER BY tenant_id, mode, seq LIMIT ?');
  const scanAfter = db.prepare<[string, string, number, number], AuditDbRow>(
    'SELECT * FROM audit_logs WHERE (tenant_id, mode, seq) > (?, ?, ?) ORDER BY tenant_id, mode, seq LIMIT ?');

  const storedHead = db.prepare<[string, string], HeadDbRow>('SELECT * FROM audit_heads WHERE tenant_id = ? AND mode = ?');
  const putHead = db.prepare(`INSERT INTO audit_heads (tenant_id, mode, seq, hash, key_id, signed_at, mac) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, mode) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, key_id = excluded.key_id,
      signed_at = excluded.signed_at, mac = excluded.mac`);
  const headsFirst = db.prepare<[number], HeadDbRow>('SELECT * FROM audit_heads ORDER BY tenant_id, mode LIMIT ?');
  const headsAfter = db.prepare<[string, string, number], HeadDbRow>(
    'SELECT * FROM audit_heads WHERE (tenant_id, mode) > (?, ?) ORDER BY tenant_id, mode LIMIT ?');
  const unsignedFirst = db.prepare<[number], HeadDbRow>('SELECT * FROM audit_heads WHERE mac IS NULL ORDER BY tenant_id, mode LIMIT ?');
  const unsignedAfter = db.prepare<[string, string, number], HeadDbRow>(
    'SELECT * FROM audit_heads WHERE mac IS NULL AND (tenant_id, mode) > (?, ?) ORDER BY tenant_id, mode LIMIT ?');

  const storeHead = (h: SignedAuditHead) =>
    putHead.run(h.owner.tenantId, h.owner.mode, h.seq, h.hash, h.keyId, h.signedAt.getTime(), h.mac);

  const appendTx = db.transaction((entry: AuditEntry, signer: AuditHeadSigner): AuditRow => {
    const last = lastRow.get(entry.owner.tenantId, entry.owner.mode) ?? null;
    const stored = storedHead.get(entry.owner.tenantId, entry.owner.mode);
    const row = linkAuditRow(entry, last);
    insert.run(row.owner.tenantId, row.owner.mode, row.seq, row.id, row.timestamp.getTime(), row.actor.userId, row.actor.keyId,
      row.action, row.resource, row.outcome, row.status, row.ip, row.userAgent, row.region, row.requestId,
      canonicalMetadata(row.metadata), row.prevHash, row.hash);
    const next = nextAuditHead(stored ? toHead(stored) : null, last, row, signer);
    if (next) storeHead(next);
    return row;
  });

  /** Re-reads one chain's head and last row under the write lock and stores what `revise` makes of them. */
  const reviseTx = db.transaction((owner: AuditOwner, revise: (stored: StoredAuditHead, last: AuditChainHead | null) => SignedAuditHead | null): boolean => {
    const stored = storedHead.get(owner.tenantId, owner.mode);
    if (!stored) return false;
    const next = revise(toHead(stored), lastRow.get(owner.tenantId, owner.mode) ?? null);
    if (next) storeHead(next);
    return next !== null;
  });

  return {
    async append(entry, signer) {
      // IMMEDIATE: the write lock is taken before the head is read, so an append on another connection (the CLI,
      // another process on the file) waits and then links to this row.
      return appendTx.immediate(entry, signer);
    },
    async findById(owner, id) {
      const row = byId.get(owner.tenantId, owner.mode, id);
      return row ? toRow(row) : null;
    },
    async list(owner, query) {
      const { where, params } = matching(owner, query.filter);
      const read = db.transaction(() => {
        const total = db.prepare(`SELECT COUNT(*) FROM audit_logs WHERE ${where}`).pluck().get(...params) as number;
        const past = query.afterSeq === null ? '' : ` AND seq ${query.order === 'desc' ? '<' : '>'} ?`;
        const rows = db.prepare<unknown[], AuditDbRow>(`SELECT * FROM audit_logs WHERE ${where}${past}
          ORDER BY seq ${query.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ?`)
          .all(...params, ...(query.afterSeq === null ? [] : [query.afterSeq]), query.limit);
        return { items: rows.map(toRow), total };
      });
      return read();
    },
    async scan(after, limit) {
      const rows = after === null ? scanFirst.all(limit) : scanAfter.all(after.tenantId, after.mode, after.seq, limit);
      return rows.map(toRow);
    },
    async head(owner) {
      const row = storedHead.get(owner.tenantId, owner.mode);
      return row ? toHead(row) : null;
    },
    async heads(after, limit) {
      return (after === null ? headsFirst.all(limit) : headsAfter.all(after.tenantId, after.mode, limit)).map(toHead);
    },
    async reviseHeads(which, revise) {
      const [first, next] = which === 'unsigned' ? [unsignedFirst, unsignedAfter] : [headsFirst, headsAfter];
      let written = 0;
      for (let after: AuditOwner | null = null; ;) {
        const page: HeadDbRow[] = after === null ? first.all(REVISE_PAGE) : next.all(after.tenantId, after.mode, REVISE_PAGE);
        for (const r of page) if (reviseTx.immediate({ tenantId: r.tenant_id, mode: r.mode as KeyMode }, revise)) written++;
        if (page.length < REVISE_PAGE) return written;
        after = { tenantId: page.at(-1)!.tenant_id, mode: page.at(-1)!.mode as KeyMode };
      }
    },
  };
}
