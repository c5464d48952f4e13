import type { AuditHeadReviser, AuditHeadSigner, StoredAuditHead } from './audit.head.ts';
import type { AuditEntry, AuditListQuery, AuditOwner, AuditPosition, AuditRow } from './audit.types.ts';

/**
 * Storage port of the audit log: append-only, one hash chain per owner (tenant + mode). Every read is scoped to one
 * owner except `scan`, which the verifier (an operator's command) uses to walk every chain.
 */
export interface AuditRepository {
  /**
   * Appends `entry` at the end of its owner's chain: reads the chain's head and links the row to it with core's
   * `linkAuditRow` (which decides seq, prevHash and hash), then inserts it, all while holding a lock that every
   * other append to that chain takes too, on any connection or node, until the insert commits. So concurrent
   * appends make one unbroken chain: seq 1, 2, 3 … without gaps, each row's prevHash the hash of the one before.
   * (SQLite: an IMMEDIATE transaction; PostgreSQL: a transaction-level advisory lock keyed on the owner.)
   * In the same transaction it stores the head core's `nextAuditHead` returns, signed by `signer` (audit.head.ts), or
   * leaves the stored head when that returns null. Returns the stored row.
   */
  append(entry: AuditEntry, signer: AuditHeadSigner): Promise<AuditRow>;
  /** The owner's row with this id; null when there is none (another owner's row too). */
  findById(owner: AuditOwner, id: string): Promise<AuditRow | null>;
  /** The owner's rows matching `query.filter`, a page at a time; `total` counts every match (all pages). */
  list(owner: AuditOwner, query: AuditListQuery): Promise<{ items: AuditRow[]; total: number }>;
  /**
   * Every row of every owner, `limit` at a time after `after` (null: from the start), ordered by tenantId (byte
   * order), mode, then seq: each chain whole and in order, one after another. For `mnemo audit verify`.
   */
  scan(after: AuditPosition | null, limit: number): Promise<AuditRow[]>;
  /** The owner's stored head; null when there is none. */
  head(owner: AuditOwner): Promise<StoredAuditHead | null>;
  /** Every stored head, `limit` at a time after `after`'s (null: from the start), ordered by tenantId (byte order), mode. */
  heads(after: AuditOwner | null, limit: number): Promise<StoredAuditHead[]>;
  /** Rewrites stored heads chain by chain, each under its chain's append lock (AuditHeadReviser); returns how many it wrote. */
  reviseHeads: AuditHeadReviser;
}
