import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { masterKey, type Keyring } from '../secrets/envelope.ts';
import type { AuditChainHead, AuditOwner, AuditRow } from './audit.types.ts';

/**
 * The signed head of each chain (docs/api.md, "Audit logs", says the same for outsiders): where the chain ends, and an
 * HMAC over it under a key only the master key gives, stored beside the rows and replaced in the transaction of every
 * append. So whoever can write the database but not read the master key cannot cut rows from a chain's end, append
 * rows of their own, or rewrite a chain with fresh hashes unnoticed (`mnemo audit verify`):
 *
 *   key = HKDF-SHA256(ikm = the 32-byte master key `keyId`, salt = empty, info = "mnemo-audit-head-v1", 32 bytes)
 *   mac = lowercase hex of HMAC-SHA256(key, UTF-8 of JSON.stringify(["mnemo-audit-head-v1", tenantId, mode, seq, hash,
 *         keyId, signedAt]))
 *
 * with signedAt as ISO 8601 UTC with milliseconds. A head names the master key it was signed with, and any key of the
 * keyring verifies its own heads: nodes whose keyrings list the same keys in another order (a rolling rotation) agree.
 * `mnemo keys rotate-master` re-signs every head under the new key before it retires the old ones.
 *
 * The upgrade that added heads stored one for every existing chain unsigned; the first start after it (or the chain's
 * next append, if sooner) signs the chain's last row then: rows up to that point are trusted on first use.
 */
export const AUDIT_HEAD_FORMAT = 'mnemo-audit-head-v1';

/** A chain's head signed under master key `keyId`. */
export interface SignedAuditHead extends AuditChainHead {
  owner: AuditOwner;
  keyId: string;
  signedAt: Date;
  /** HMAC-SHA256 (hex) of auditHeadCanonicalForm under the head key of `keyId`. */
  mac: string;
}

/** A head left unsigned by the upgrade that added heads, until the next start or append signs it. */
export interface UnsignedAuditHead extends AuditChainHead {
  owner: AuditOwner;
  keyId: null;
  signedAt: null;
  mac: null;
}

export type StoredAuditHead = SignedAuditHead | UnsignedAuditHead;

/** What a signed head's MAC says: `forged` (it does not match), or `unknown_key` (the keyring lacks its key). */
export type AuditHeadCheck = 'valid' | 'forged' | 'unknown_key';

/** Signs heads with the keyring's active master key and checks them with any key of it. */
export interface AuditHeadSigner {
  readonly keyId: string;
  sign(owner: AuditOwner, head: AuditChainHead, at: Date): SignedAuditHead;
  check(head: SignedAuditHead): AuditHeadCheck;
}

/** The exact text that is MACed (see the comment at the top). */
export function auditHeadCanonicalForm(head: Omit<SignedAuditHead, 'mac'>): string {
  return JSON.stringify([AUDIT_HEAD_FORMAT, head.owner.tenantId, head.owner.mode, head.seq, head.hash, head.keyId, head.signedAt.toISOString()]);
}

/** The head key of one master key: its own HKDF label, so it is never a key anything else uses. */
export const auditHeadKey = (master: Buffer): Buffer => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), AUDIT_HEAD_FORMAT, 32));

export function createAuditHeadSigner(keyring: Keyring): AuditHeadSigner {
  const keys = new Map<string, Buffer>();
  const keyOf = (keyId: string): Buffer | null => {
    if (!keyring.keys.has(keyId)) return null;
    let key = keys.get(keyId);
    if (!key) keys.set(keyId, key = auditHeadKey(masterKey(keyring, keyId)));
    return key;
  };
  const macOf = (key: Buffer, head: Omit<SignedAuditHead, 'mac'>) => createHmac('sha256', key).update(auditHeadCanonicalForm(head), 'utf8').digest('hex');
  return {
    keyId: keyring.activeId,
    sign(owner, head, at) {
      const unsigned = { owner: { tenantId: owner.tenantId, mode: owner.mode }, seq: head.seq, hash: head.hash, keyId: keyring.activeId, signedAt: at };
      return { ...unsigned, mac: macOf(keyOf(keyring.activeId)!, unsigned) };
    },
    check(head) {
      const key = keyOf(head.keyId);
      if (!key) return 'unknown_key';
      const expected = Buffer.from(macOf(key, head), 'utf8');
      const given = Buffer.from(head.mac, 'utf8');
      return expected.length === given.length && timingSafeEqual(expected, given) ? 'valid' : 'forged';
    },
  };
}

const sameHead = (a: AuditChainHead | null, b: AuditChainHead | null) => a?.seq === b?.seq && a?.hash === b?.hash;

/**
 * The head to store once `row` is appended after `last` (the chain's last row before it; null: none), or null to
 * leave `stored` as it is. Storage calls this in the append's transaction, under the chain's lock. A head that does
 * not verify or does not match the chain's end (rows cut, appended or rewritten behind the server's back), or a chain
 * with rows but no head, is never replaced: the mismatch stays for `mnemo audit verify` to report.
 */
export function nextAuditHead(stored: StoredAuditHead | null, last: AuditChainHead | null, row: AuditRow, signer: AuditHeadSigner): SignedAuditHead | null {
  const continues = stored === null
    ? last === null
    : stored.mac === null || (signer.check(stored) === 'valid' && sameHead(stored, last));
  return continues ? signer.sign(row.owner, row, row.timestamp) : null;
}

/**
 * Signs the heads the upgrade left unsigned, each at its chain's last row as it stands now (trusted on first use);
 * returns the chains signed. The server runs it at start (app/container.ts).
 */
export async function signUnsignedAuditHeads(
  audit: { reviseHeads: AuditHeadReviser }, signer: AuditHeadSigner, at: Date,
): Promise<AuditOwner[]> {
  const signed: AuditOwner[] = [];
  await audit.reviseHeads('unsigned', (stored, last) => {
    if (stored.mac !== null || last === null) return null;
    signed.push(stored.owner);
    return signer.sign(stored.owner, last, at);
  });
  return signed;
}

/** What a rotation did to the heads: every head seen, re-signed under the active key, left because it did not verify. */
export interface AuditHeadRotation {
  heads: number;
  resigned: number;
  unverified: number;
  /** The keys the re-signed heads were under. */
  movedOff: Set<string>;
}

/**
 * Re-signs, under the active key, every head signed with another key of the keyring whose MAC verifies (master-key
 * rotation), keeping its seq and hash: a head that does not verify is left as it is, so a forged one is never made
 * valid (verify keeps reporting it). Unsigned heads are left to the next start.
 */
export async function resignAuditHeads(audit: { reviseHeads: AuditHeadReviser }, signer: AuditHeadSigner, at: Date): Promise<AuditHeadRotation> {
  const done: AuditHeadRotation = { heads: 0, resigned: 0, unverified: 0, movedOff: new Set() };
  await audit.reviseHeads('all', (stored) => {
    done.heads++;
    if (stored.mac === null || stored.keyId === signer.keyId) return null;
    if (signer.check(stored) !== 'valid') {
      done.unverified++;
      return null;
    }
    done.resigned++;
    done.movedOff.add(stored.keyId);
    return signer.sign(stored.owner, stored, at);
  });
  return done;
}

/**
 * Storage's way of rewriting heads (AuditRepository.reviseHeads): for each stored head (`unsigned`: those without a
 * MAC only), under its chain's append lock, `revise` gets the head and the chain's last row (null: no row) and returns
 * the head to store instead, or null to leave it.
 */
export type AuditHeadReviser = (
  which: 'unsigned' | 'all',
  revise: (stored: StoredAuditHead, last: AuditChainHead | null) => SignedAuditHead | null,
) => Promise<number>;
