import type { Principal } from '../api-keys/api-key.types.ts';
import type { AuditService } from '../audit/audit.service.ts';
import { requirePermission } from '../api-keys/api-key.service.ts';
import { isDomainError, type DomainErrorCode } from '../errors.ts';
import { policyOf, type OperationName } from './catalog.ts';

/**
 * The status an audit row records for a refusal: the one the REST surfaces answer with, so that a row reads the
 * same whichever surface (REST, MCP, dashboard) ran the operation.
 */
export const AUDIT_STATUS_OF: Record<DomainErrorCode, number> = {
  VALIDATION_FAILED: 400, NOT_FOUND: 404, AMBIGUOUS_ID: 409, CONTENT_TOO_LARGE: 413, UNAUTHENTICATED: 401, PERMISSION_DENIED: 403,
  RATE_LIMITED: 429, QUOTA_EXCEEDED: 429, EMBEDDING_FAILED: 503, TIMEOUT: 408, CONFLICT: 409, OVERLOADED: 503, IDEMPOTENCY_KEY_REUSED: 422,
};

export const auditStatusOf = (err: unknown): number => (isDomainError(err) ? AUDIT_STATUS_OF[err.code] : 500);

/** Where a call came from, as its audit row keeps it. */
export interface CallOrigin {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  region?: string | null;
}

/** What an audited call acted on and what its row adds (small, never a value or a key). */
export interface AuditSubject {
  resource: string;
  metadata?: Record<string, unknown>;
}

export type OperationRunner = ReturnType<typeof createOperationRunner>;

/** Throws PERMISSION_DENIED when `caller` lacks the permission of operation `name`: the one permission check. */
export function authorize(name: OperationName, caller: Pick<Principal, 'scopes'>): void {
  const needed = policyOf(name).permission;
  if (needed !== null) requirePermission(caller, needed);
}

/**
 * Runs operations under their policy (catalog.ts), the same for every surface: the permission is checked before
 * anything else, and an audited operation's row is written — success or refusal — before its answer is returned,
 * so that an answer whose row could not be stored never leaves. Quotas are charged with `chargeQuota` (quota.ts) where
 * the work starts, after the input is checked; Idempotency-Key replays are the HTTP surface's (they replay an HTTP
 * answer) and the catalogue's `idempotent` says which operations take one.
 */
export function createOperationRunner(deps: { audit: Pick<AuditService, 'record'> }) {

  /** Writes the audit row of one call of an audited operation (nothing for the others); throws when it cannot. */
  async function record(name: OperationName, caller: Principal, origin: CallOrigin, subject: AuditSubject, status: number): Promise<void> {
    const action = policyOf(name).audit;
    if (action === undefined) return;
    await deps.audit.record({
      owner: { tenantId: caller.tenantId, mode: caller.mode },
      actor: { userId: caller.userId, keyId: caller.keyId },
      action, resource: subject.resource, outcome: status < 400 ? 'success' : 'failure', status,
      ip: origin.ip, userAgent: origin.userAgent, region: origin.region ?? null, requestId: origin.requestId,
      metadata: subject.metadata ?? {},
    });
  }

  /**
   * Runs `work` as operation `name` for `caller`: permission, then the work, then (audited operations) the row,
   * with the status the refusal has on REST and the metadata `noted` draws from the result. A refusal's row is best
   * effort (the refusal is the answer); a success whose row cannot be stored throws instead of answering.
   */
  async function run<T>(
    name: OperationName, caller: Principal, origin: CallOrigin, subject: AuditSubject, work: () => Promise<T>,
    noted?: (result: T) => Record<string, unknown>,
  ): Promise<T> {
    let result: T;
    try {
      authorize(name, caller);
      result = await work();
    } catch (err) {
      if (isDomainError(err)) await record(name, caller, origin, subject, auditStatusOf(err)).catch(() => undefined);
      throw err;
    }
    await record(name, caller, origin, noted ? { ...subject, metadata: { ...subject.metadata, ...noted(result) } } : subject, 200);
    return result;
  }

  return { authorize, record, run };
}
