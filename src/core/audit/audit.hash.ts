import { createHash } from 'node:crypto';
import type { AuditChainHead, AuditEntry, AuditMetadata, AuditRow } from './audit.types.ts';

/**
 * The hash chain of an owner's audit rows (docs/api.md, "Audit logs", says the same for outsiders):
 *
 *   hash = lowercase hex of SHA-256 over the UTF-8 bytes of
 *          JSON.stringify(["mnemo-audit-v1", tenantId, mode, seq, id, timestamp, userId, keyId, action, resource,
 *                          outcome, status, ip, userAgent, region, requestId, metadata, prevHash])
 *
 * with no whitespace; timestamp as ISO 8601 UTC with milliseconds (`2026-06-01T12:00:00.000Z`); seq and status as
 * integers; keyId, ip, userAgent, region and requestId as null when absent; metadata as a string holding the
 * metadata object's JSON with its keys in ascending order and no whitespace; prevHash the previous row's hash, or 64
 * zeros for seq 1. Every text field is well-formed Unicode without NUL (audit.rules.ts cleans them before they are
 * hashed), and JSON.stringify escapes only `"` and `\` (as `\"`, `\\`) and U+0001-U+001F (as `\b \t \n \f \r`, the
 * others as `\u00xx` in lowercase hex), so any serialiser that does the same writes the same bytes: Python's
 * `json.dumps(x, separators=(",", ":"), ensure_ascii=False)` does.
 *
 * What the chain proves: a row edited, removed, inserted or moved breaks it at that row or the next one, unless
 * every later row of the chain is rewritten too. What it cannot show alone (rows cut from the end, rows appended, a
 * chain rewritten with fresh hashes) its signed head shows: an HMAC of the chain's last seq and hash under a key
 * derived from the master key, replaced with each append (audit.head.ts). A chain deleted together with its head, or
 * the whole database rolled back, leave nothing to compare in the database: heads kept elsewhere (`mnemo audit head`,
 * `mnemo audit verify --since-head`) show those, as CloudTrail's digest files are kept apart from the logs.
 */
export const AUDIT_HASH_FORMAT = 'mnemo-audit-v1';

/** The prevHash of the first row of every chain. */
export const GENESIS_HASH = '0'.repeat(64);

/** The metadata object as the chain hashes it: JSON with its keys in ascending order. */
export function canonicalMetadata(metadata: AuditMetadata): string {
  const keys = Object.keys(metadata).sort();
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, metadata[k]])));
}

/** The exact text that is hashed for a row (see the comment at the top). */
export function auditCanonicalForm(row: Omit<AuditRow, 'hash'>): string {
  return JSON.stringify([
    AUDIT_HASH_FORMAT, row.owner.tenantId, row.owner.mode, row.seq, row.id, row.timestamp.toISOString(),
    row.actor.userId, row.actor.keyId, row.action, row.resource, row.outcome, row.status,
    row.ip, row.userAgent, row.region, row.requestId, canonicalMetadata(row.metadata), row.prevHash,
  ]);
}

export const auditRowHash = (row: Omit<AuditRow, 'hash'>): string =>
  createHash('sha256').update(auditCanonicalForm(row), 'utf8').digest('hex');

/**
 * The row that follows `head` in its chain (null: the chain is empty). Storage calls this while it holds the
 * chain's append lock (AuditRepository.append): the core decides the link, the adapter only serialises appends.
 */
export function linkAuditRow(entry: AuditEntry, head: AuditChainHead | null): AuditRow {
  const linked = { ...entry, seq: (head?.seq ?? 0) + 1, prevHash: head?.hash ?? GENESIS_HASH };
  return { ...linked, hash: auditRowHash(linked) };
}
