import { auditRowHash, GENESIS_HASH } from './audit.hash.ts';
import type { AuditHeadSigner, SignedAuditHead, StoredAuditHead } from './audit.head.ts';
import type { AuditRepository } from './audit.repository.ts';
import type { AuditChainHead, AuditOwner, AuditRow } from './audit.types.ts';

/** The end of one intact chain: its rows link up and its signed head names its last row. */
export interface AuditChainSummary {
  owner: AuditOwner;
  rows: number;
  /** The last row's seq and hash. */
  headSeq: number;
  headHash: string;
}

/**
 * Why a chain does not hold. Its rows:
 * - `missing_rows`: seq jumps (rows were deleted before this one);
 * - `prev_hash_mismatch`: this row does not follow the one before it (that one was changed and re-hashed, or this
 *   row was inserted or moved);
 * - `hash_mismatch`: this row is not what was hashed (it was edited).
 * Its signed head (audit.head.ts), or a head kept elsewhere (`since`):
 * - `head_missing`: the chain has rows but no signed head (the head row was deleted, or not signed since the upgrade);
 * - `head_forged`: the head's MAC does not verify, or names a master key the keyring does not hold;
 * - `truncated`: the head is past the chain's last row (rows were cut from its end, or the database rolled back);
 * - `head_mismatch`: the row at the head's seq has another hash (the chain was rewritten), or rows follow the head
 *   (appended without the master key);
 * - `chain_missing`: a head whose chain has no rows at all.
 */
export type AuditBreakReason =
  | 'missing_rows' | 'prev_hash_mismatch' | 'hash_mismatch'
  | 'head_missing' | 'head_forged' | 'truncated' | 'head_mismatch' | 'chain_missing';

/** The first finding of a chain that does not hold. */
export interface AuditChainBreak {
  owner: AuditOwner;
  /** The row where the links break; for a finding about a head, the chain's last row (seq 0 and id null: no row). */
  seq: number;
  id: string | null;
  reason: AuditBreakReason;
  message: string;
  /** For a finding about a head: the head compared (the stored one, or the kept one of `since`). */
  head?: AuditChainHead;
}

export interface AuditVerification {
  ok: boolean;
  rows: number;
  /** Every chain that holds, in (tenant, mode) order. */
  intact: AuditChainSummary[];
  /** The first finding of every chain that does not hold: chains with rows in (tenant, mode) order, then those without. */
  broken: AuditChainBreak[];
}

const ownerKey = (owner: AuditOwner) => `${owner.mode}\u0000${owner.tenantId}`;
const sameOwner = (a: AuditOwner, b: AuditOwner) => a.tenantId === b.tenantId && a.mode === b.mode;
const short = (hash: string) => `${hash.slice(0, 12)}…`;

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

const rowsRange = (from: number, to: number) => (from === to ? `row ${from}` : `rows ${from}-${to}`);

/** A head that should match the chain: the stored one or a kept one, and what a mismatch of it is called. */
interface Expected {
  head: AuditChainHead;
  /** `its signed head` or `the kept head`. */
  name: string;
  /** Set by the scan: the hash of the chain's row at head.seq. */
  found?: string;
}

/** The finding for one head against the chain's last row (null: no row), or null when the head matches. */
function headProblem(e: Expected, last: AuditRow | null, kept: boolean): Pick<AuditChainBreak, 'reason' | 'message'> | null {
  const { head, name } = e;
  if (last === null) {
    return { reason: 'chain_missing', message: `${name} is row ${head.seq} but the chain has no rows: the whole chain was deleted` };
  }
  if (head.seq > last.seq) {
    return {
      reason: 'truncated',
      message: `${name} is row ${head.seq} but the chain ends at row ${last.seq} (${last.id}): ${rowsRange(last.seq + 1, head.seq)} `
        + `${head.seq === last.seq + 1 ? 'was' : 'were'} cut from its end${kept ? ', or the database was rolled back' : ''}`,
    };
  }
  if (e.found !== head.hash) {
    return {
      reason: 'head_mismatch',
      message: `row ${head.seq} of the chain is not the one ${name} names (hash ${short(e.found ?? '')} instead of ${short(head.hash)}): `
        + 'the chain was rewritten',
    };
  }
  if (!kept && head.seq < last.seq) {
    return {
      reason: 'head_mismatch',
      message: `${head.seq + 1 === last.seq ? `row ${last.seq} (${last.id}) follows` : `rows ${head.seq + 1}-${last.seq} (up to ${last.id}) follow`} `
        + `its signed head (row ${head.seq}): appended without the master key`,
    };
  }
  return null;
}

/** The finding for a stored head's signature, or null when it holds. */
function signatureProblem(stored: StoredAuditHead | undefined, last: AuditRow | null, signer: Pick<AuditHeadSigner, 'check'>):
  Pick<AuditChainBreak, 'reason' | 'message'> | null {
  const end = last === null ? 'it has no rows' : `it ends at row ${last.seq} (${last.id})`;
  if (stored === undefined) return { reason: 'head_missing', message: `the chain has no signed head (${end}): its head row was deleted, or a server without signed heads started it` };
  if (stored.mac === null) {
    return { reason: 'head_missing', message: `its head is not signed yet (${end}): a server start after the upgrade signs it` };
  }
  const check = signer.check(stored);
  if (check === 'unknown_key') {
    return { reason: 'head_forged', message: `its head (row ${stored.seq}) is signed with master key ${stored.keyId}, which the keyring does not hold` };
  }
  if (check === 'forged') {
    return { reason: 'head_forged', message: `its head (row ${stored.seq}) does not verify under master key ${stored.keyId}: this server did not sign it` };
  }
  return null;
}

/**
 * Walks every chain of the store in order, `pageSize` rows at a time, and reports the first finding of each chain
 * and the end of each intact one. A chain holds when its rows link up and its stored head is signed (`signer` checks
 * the MAC) and names its last row. `since`: heads kept elsewhere (`mnemo audit head`), each of which must verify, and
 * whose chain must still reach it with the same hash: what catches a chain deleted or cut together with its head, or
 * a database rolled back. Memory grows with the number of chains (heads), not of rows.
 */
export async function verifyAuditChains(
  audit: Pick<AuditRepository, 'scan' | 'heads'>, signer: Pick<AuditHeadSigner, 'check'>,
  options: { pageSize?: number; since?: readonly SignedAuditHead[] } = {},
): Promise<AuditVerification> {
  const pageSize = options.pageSize ?? 1000;
  const result: AuditVerification = { ok: true, rows: 0, intact: [], broken: [] };

  /** Per chain: its stored head (`signed`) and what it and the kept heads expect of the rows. */
  const expected = new Map<string, { owner: AuditOwner; signed?: StoredAuditHead; stored?: Expected; kept: Expected[]; keptBreak?: AuditChainBreak }>();
  const expectationsOf = (owner: AuditOwner) => {
    const key = ownerKey(owner);
    let e = expected.get(key);
    if (!e) expected.set(key, e = { owner, kept: [] });
    return e;
  };
  for (let after: AuditOwner | null = null; ;) {
    const page: StoredAuditHead[] = await audit.heads(after, pageSize);
    for (const h of page) Object.assign(expectationsOf(h.owner), { signed: h, stored: { head: { seq: h.seq, hash: h.hash }, name: 'its signed head' } });
    if (page.length < pageSize) break;
    after = page.at(-1)!.owner;
  }
  for (const h of options.since ?? []) {
    const e = expectationsOf(h.owner);
    const check = signer.check(h);
    if (check !== 'valid') {
      e.keptBreak ??= {
        owner: h.owner, seq: 0, id: null, reason: 'head_forged', head: { seq: h.seq, hash: h.hash },
        message: check === 'forged'
          ? `the kept head of row ${h.seq} does not verify under master key ${h.keyId}: it is not a head this server signed`
          : `the kept head of row ${h.seq} is signed with master key ${h.keyId}, which the keyring does not hold`,
      };
    } else e.kept.push({ head: { seq: h.seq, hash: h.hash }, name: 'the kept head' });
  }

  const close = (owner: AuditOwner, last: AuditRow | null, rows: number, rowBreak: AuditChainBreak | null) => {
    const e = expected.get(ownerKey(owner));
    const at = { owner, seq: last?.seq ?? 0, id: last?.id ?? null };
    let finding = rowBreak;
    if (!finding && last !== null) {
      const problem = signatureProblem(e?.signed, last, signer);
      if (problem) finding = { ...at, ...problem, ...(e?.stored ? { head: e.stored.head } : {}) };
    }
    if (!finding && e?.stored) {
      const problem = headProblem(e.stored, last, false);
      if (problem) finding = { ...at, ...problem, head: e.stored.head };
    }
    if (!finding && e?.keptBreak) finding = { ...e.keptBreak, ...at };
    for (const k of e?.kept ?? []) {
      if (finding) break;
      const problem = headProblem(k, last, true);
      if (problem) finding = { ...at, ...problem, head: k.head };
    }
    expected.delete(ownerKey(owner));
    if (finding) result.broken.push(finding);
    else if (last) result.intact.push({ owner, rows, headSeq: last.seq, headHash: last.hash });
  };

  let current: { owner: AuditOwner; last: AuditRow | null; rows: number; broken: AuditChainBreak | null; wants: Map<number, Expected[]> } | null = null;
  for (let after: AuditRow | null = null; ;) {
    const page: AuditRow[] = await audit.scan(after && { tenantId: after.owner.tenantId, mode: after.owner.mode, seq: after.seq }, pageSize);
    for (const row of page) {
      result.rows++;
      if (!current || !sameOwner(current.owner, row.owner)) {
        if (current) close(current.owner, current.last, current.rows, current.broken);
        // The seqs whose hash a head names, so the scan notes them in passing.
        const wants = new Map<number, Expected[]>();
        const e = expected.get(ownerKey(row.owner));
        for (const x of [...(e?.stored ? [e.stored] : []), ...(e?.kept ?? [])]) wants.set(x.head.seq, [...(wants.get(x.head.seq) ?? []), x]);
        current = { owner: row.owner, last: null, rows: 0, broken: null, wants };
      }
      current.rows++;
      if (!current.broken) {
        const problem = linkProblem(row, current.last);
        if (problem) current.broken = { owner: row.owner, seq: row.seq, id: row.id, ...problem };
      }
      for (const x of current.wants.get(row.seq) ?? []) x.found = row.hash;
      current.last = row;
    }
    if (page.length < pageSize) break;
    after = page.at(-1)!;
  }
  if (current) close(current.owner, current.last, current.rows, current.broken);
  // Heads whose chain has no row left.
  for (const e of [...expected.values()]) close(e.owner, null, 0, null);
  result.ok = result.broken.length === 0;
  return result;
}
