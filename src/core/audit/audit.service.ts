import type { Clock } from '../clock.ts';
import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import { prefixedId } from '../ids.ts';
import type { AuditHeadSigner } from './audit.head.ts';
import type { AuditRepository } from './audit.repository.ts';
import {
  AUDIT_TEXT_MAX, cleanAuditMetadata, cleanAuditText, cleanOptionalAuditText, parseAuditFilter, type AuditAction,
} from './audit.rules.ts';
import { verifyAuditChains, type AuditVerification } from './audit.verifier.ts';
import type { AuditActor, AuditFilter, AuditOutcome, AuditOwner, AuditRow } from './audit.types.ts';

/** What a caller records about one request; the service adds the id and the time, storage the chain link. */
export interface AuditRecordInput {
  owner: AuditOwner;
  actor: AuditActor;
  action: AuditAction;
  resource: string;
  outcome: AuditOutcome;
  status: number;
  ip?: string | null;
  userAgent?: string | null;
  region?: string | null;
  requestId?: string | null;
  /** Small and never a value or a key (AuditMetadata); unfit entries are left out. */
  metadata?: Record<string, unknown>;
}

/** A filter as a request gives it (text), checked by the service. */
export interface AuditFilterInput {
  actor?: string | undefined;
  action?: string | undefined;
  resource?: string | undefined;
  /** ISO 8601: rows at or after it. */
  from?: string | undefined;
  /** ISO 8601: rows before it. */
  to?: string | undefined;
  /** Rows of requests that named this region (`X-Region`). */
  region?: string | undefined;
}

export type AuditService = ReturnType<typeof createAuditService>;

/** How many rows one export holds at most; `nextCursor` continues past them. */
export const AUDIT_EXPORT_MAX_ROWS = 10_000;

/**
 * Cursors are opaque to clients: the last seq of a page and the direction it was read in (`d` lists newest first,
 * `a` exports in chain order), so a list's cursor is refused by an export and the other way round.
 */
const encodeCursor = (direction: 'a' | 'd', seq: number): string => Buffer.from(`${direction}:${seq}`, 'utf8').toString('base64url');
function decodeCursor(cursor: string, direction: 'a' | 'd'): number {
  const m = /^([ad]):([1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const seq = m ? Number(m[2]) : NaN;
  if (!m || m[1] !== direction || !Number.isSafeInteger(seq)) {
    throw validationError([{ field: 'cursor', reason: 'invalid_value', message: 'is not a cursor of this list' }]);
  }
  return seq;
}

function checkedFilter(input: AuditFilterInput): AuditFilter {
  const problems: FieldProblem[] = [];
  const filter = parseAuditFilter(input, problems);
  if (problems.length > 0) throw validationError(problems);
  return filter;
}

/**
 * The audit log of each owner (tenant + mode): recording, and reading it back. Rows are append-only and chained
 * (audit.hash.ts), each chain's head signed by `heads` (audit.head.ts: a key derived from the master key);
 * `verifyAuditChains` (audit.verifier.ts) checks the chains.
 */
export function createAuditService(deps: { audit: AuditRepository; clock: Clock; heads: AuditHeadSigner }) {
  const { audit, clock, heads } = deps;

  /** Records one row; resolves once it is stored. A failure throws: the caller must then withhold its answer. */
  async function record(input: AuditRecordInput): Promise<AuditRow> {
    return audit.append({
      id: prefixedId('aud', 24),
      owner: { tenantId: input.owner.tenantId, mode: input.owner.mode },
      timestamp: clock.now(),
      actor: { userId: cleanAuditText(input.actor.userId, AUDIT_TEXT_MAX.actor), keyId: cleanOptionalAuditText(input.actor.keyId, AUDIT_TEXT_MAX.actor) },
      action: input.action,
      resource: cleanAuditText(input.resource, AUDIT_TEXT_MAX.resource),
      outcome: input.outcome,
      status: input.status,
      ip: cleanOptionalAuditText(input.ip, AUDIT_TEXT_MAX.ip),
      userAgent: cleanOptionalAuditText(input.userAgent, AUDIT_TEXT_MAX.userAgent),
      region: cleanOptionalAuditText(input.region, AUDIT_TEXT_MAX.region),
      requestId: cleanOptionalAuditText(input.requestId, AUDIT_TEXT_MAX.requestId),
      metadata: cleanAuditMetadata(input.metadata ?? {}),
    }, heads);
  }

  /** Newest first; `cursor` continues after the previous page (null: from the newest). */
  async function list(owner: AuditOwner, filter: AuditFilterInput, page: { limit: number; cursor: string | null }):
    Promise<{ items: AuditRow[]; total: number; nextCursor: string | null }> {
    const checked = checkedFilter(filter);
    const afterSeq = page.cursor === null ? null : decodeCursor(page.cursor, 'd');
    // One more than asked tells whether another page follows.
    const { items, total } = await audit.list(owner, { filter: checked, order: 'desc', afterSeq, limit: page.limit + 1 });
    const rows = items.slice(0, page.limit);
    return { items: rows, total, nextCursor: items.length > page.limit ? encodeCursor('d', rows.at(-1)!.seq) : null };
  }

  async function get(owner: AuditOwner, id: string): Promise<AuditRow> {
    const row = await audit.findById(owner, id);
    if (!row) throw new DomainError('NOT_FOUND', `Audit log entry ${JSON.stringify(id)} not found`);
    return row;
  }

  /**
   * Rows in chain order (oldest first), at most `limit` (≤ AUDIT_EXPORT_MAX_ROWS); `nextCursor` continues after them.
   * An export of a whole chain (no filter) can be checked link by link by anyone (docs/api.md, "Audit logs").
   */
  async function exportRows(owner: AuditOwner, filter: AuditFilterInput, page: { limit: number; cursor: string | null }):
    Promise<{ rows: AuditRow[]; total: number; nextCursor: string | null }> {
    const checked = checkedFilter(filter);
    const limit = Math.min(page.limit, AUDIT_EXPORT_MAX_ROWS);
    const afterSeq = page.cursor === null ? null : decodeCursor(page.cursor, 'a');
    const { items, total } = await audit.list(owner, { filter: checked, order: 'asc', afterSeq, limit: limit + 1 });
    const rows = items.slice(0, limit);
    return { rows, total, nextCursor: items.length > limit ? encodeCursor('a', rows.at(-1)!.seq) : null };
  }

  /**
   * Checks the owner's own chain link by link and against its signed head (audit.verifier.ts), reading it in chain
   * order a page at a time: what `mnemo audit verify` does for every chain of the store, for one tenant and mode (the
   * dashboard's audit page).
   */
  async function verify(owner: AuditOwner, options: { pageSize?: number } = {}): Promise<AuditVerification> {
    const all = checkedFilter({});
    const ownChain: Pick<AuditRepository, 'scan' | 'heads'> = {
      scan: async (after, limit) => (await audit.list(owner, { filter: all, order: 'asc', afterSeq: after?.seq ?? null, limit })).items,
      heads: async (after) => {
        const head = after === null ? await audit.head(owner) : null;
        return head ? [head] : [];
      },
    };
    return verifyAuditChains(ownChain, heads, options);
  }

  return { record, list, get, export: exportRows, verify };
}
