import { stringify } from 'csv-stringify/sync';
import { isoTimestamp } from '../../core/clock.ts';
import { canonicalMetadata } from '../../core/audit/audit.hash.ts';
import type { AuditRow } from '../../core/audit/audit.types.ts';

/** An audit row on the wire: every field the hash covers, so that anyone can check the chain (docs/api.md). */
export const toAuditLogWire = (r: AuditRow) => ({
  id: r.id,
  seq: r.seq,
  tenantId: r.owner.tenantId,
  mode: r.owner.mode,
  timestamp: isoTimestamp(r.timestamp),
  actor: { userId: r.actor.userId, keyId: r.actor.keyId },
  action: r.action,
  resource: r.resource,
  outcome: r.outcome,
  status: r.status,
  ip: r.ip,
  userAgent: r.userAgent,
  region: r.region,
  requestId: r.requestId,
  metadata: r.metadata,
  prevHash: r.prevHash,
  hash: r.hash,
});

/** The CSV export's columns, in order (its header line). `metadata` is the canonical JSON text the hash covers. */
export const AUDIT_CSV_COLUMNS = [
  'id', 'seq', 'tenantId', 'mode', 'timestamp', 'userId', 'keyId', 'action', 'resource', 'outcome', 'status', 'ip',
  'userAgent', 'region', 'requestId', 'metadata', 'prevHash', 'hash',
] as const;

/**
 * The CSV export (csv-stringify): a header line, then one line per row, each ending in CRLF (RFC 4180); a field is
 * quoted when it holds a comma, a quote, CR or LF (quotes doubled); null is an empty field. Text a spreadsheet would
 * run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR) gets a leading `'` (OWASP, CSV injection): such a
 * cell no longer equals what was hashed, so check hashes on the JSON export.
 */
export function toAuditCsv(rows: readonly AuditRow[]): string {
  const records = rows.map((r) => [
    r.id, r.seq, r.owner.tenantId, r.owner.mode, isoTimestamp(r.timestamp), r.actor.userId, r.actor.keyId, r.action,
    r.resource, r.outcome, r.status, r.ip, r.userAgent, r.region, r.requestId, canonicalMetadata(r.metadata), r.prevHash, r.hash,
  ]);
  return stringify([[...AUDIT_CSV_COLUMNS], ...records], { record_delimiter: 'windows', escape_formulas: true, quoted_match: /[\r\n]/ });
}
