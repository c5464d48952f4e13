import { auditRowHash, GENESIS_HASH } from './audit.hash.ts';
import type { AuditRepository } from './audit.repository.ts';
import type { AuditOwner, AuditRow } from './audit.types.ts';

/** The end of one intact chain: what to keep elsewhere, so that rows cut from its end can be noticed later. */
export interface AuditChainSummary {
  owner: AuditOwner;
  rows: number;
  /** The last row's seq and hash. */
  headSeq: number;
  headHash: string;
}

/**
 * The first broken link of a chain:
 * - `missing_rows`: seq jumps (rows were deleted before this one);
 * - `prev_hash_mismatch`: this row does not follow the one before it (that one was changed and re-hashed, or this
 *   row was inserted or moved);
 * - `hash_mismatch`: this row is not what was hashed (it was edited).
 */
export interface AuditChainBreak {
  owner: AuditOwner;
  seq: number;
  id: string;
  reason: 'missing_rows' | 'prev_hash_mismatch' | 'hash_mismatch';
  message: string;
}

export interface AuditVerification {
  ok: boolean;
  rows: number;
  /** Every chain that holds, in (tenant, mode) order. */
  intact: AuditChainSummary[];
  /** The first break of every chain that does not hold. */
  broken: AuditChainBreak[];
}

const sameOwner = (a: AuditOwner, b: AuditOwner) => a.tenantId === b.tenantId && a.mode === b.mode;

/** Why `row` does not follow `previous` (null: it should be its chain's first row), or null when it does. */
function linkProblem(row: AuditRow, previous: AuditRow | null): Pick<AuditChainBreak, 'reason' | 'message'> | null {
  const expectedSeq = (previous?.seq ?? 0) + 1;
  if (row.seq !== expectedSeq) {
    const missing = row.seq - 1 === expectedSeq ? `row ${expectedSeq} is` : `rows ${expectedSeq}-${row.seq - 1} are`;
    return { reason: 'missing_rows', message: `${missing} missing before row ${row.seq} (${row.id})` };
  }
  if (row.prevHash !== (previous?.hash ?? GENESIS_HASH)) {
    return {
      reason: 'prev_hash_mismatch',
      message: previous === null
        ? `row ${row.seq} (${row.id}) is the first of its chain but does not start from the genesis hash`
        : `row ${row.seq} (${row.id}) does not follow row ${previous.seq} (${previous.id}): row ${previous.seq} was changed, or this row was inserted or moved`,
    };
  }
  if (auditRowHash(row) !== row.hash) {
    return { reason: 'hash_mismatch', message: `row ${row.seq} (${row.id}) was edited: its fields no longer match its hash` };
  }
  return null;
}

/**
 * Walks every chain of the store in order, `pageSize` rows at a time (memory stays flat), and reports the first
 * broken link of each chain and the head of each intact one.
 */
export async function verifyAuditChains(audit: Pick<AuditRepository, 'scan'>, options: { pageSize?: number } = {}): Promise<AuditVerification> {
  const pageSize = options.pageSize ?? 1000;
  const result: AuditVerification = { ok: true, rows: 0, intact: [], broken: [] };
  let current: { owner: AuditOwner; last: AuditRow | null; rows: number; broken: boolean } | null = null;
  const close = () => {
    if (current && !current.broken && current.last) {
      result.intact.push({ owner: current.owner, rows: current.rows, headSeq: current.last.seq, headHash: current.last.hash });
    }
  };
  for (let after: AuditRow | null = null; ;) {
    const page: AuditRow[] = await audit.scan(after && { tenantId: after.owner.tenantId, mode: after.owner.mode, seq: after.seq }, pageSize);
    for (const row of page) {
      result.rows++;
      if (!current || !sameOwner(current.owner, row.owner)) {
        close();
        current = { owner: row.owner, last: null, rows: 0, broken: false };
      }
      current.rows++;
      if (!current.broken) {
        const problem = linkProblem(row, current.last);
        if (problem) {
          current.broken = true;
          result.broken.push({ owner: row.owner, seq: row.seq, id: row.id, ...problem });
        }
      }
      current.last = row;
    }
    if (page.length < pageSize) break;
    after = page.at(-1)!;
  }
  close();
  result.ok = result.broken.length === 0;
  return result;
}
