import { DomainError, isDomainError, validationError } from '../errors.ts';
import { governingResource, parseUriOf } from './governing.ts';
import type { McpApprovalRepository } from './mcp-approval.repository.ts';
import type { McpApprovalService, McpApprovalView } from './mcp-approval.service.ts';
import type { McpResourceRepository } from './mcp-resource.repository.ts';
import type { McpCaller, McpResourceRead, McpResourceService } from './mcp-resource.service.ts';
import { formatMcpUri, governingCandidates, isWildcard } from './mcp-uri.ts';
import { MCP_TTL_MAX_SECONDS } from './mcp.rules.ts';
import { effectiveStatus, type McpOwner, type StoredMcpApproval, type StoredMcpResource } from './mcp.types.ts';

/**
 * What a read by the requester itself gives (the MCP server's `resources/read`):
 * - `value`: the registration needs no approval, or an approval of the caller's opens it;
 * - `pending`: the caller's request waits for a person (`approval`; `requested` when this read made it);
 * - `denied`: the caller's latest request was denied and its window (until its expiresAt) is not over;
 * - `expired`: the caller's latest request is over (unanswered, or its approval or denial past its expiresAt);
 *   this read asked anew, and `next` is that new request (pending, or approved at once by auto-approval, in which
 *   case the value came too).
 */
export type McpRequesterRead =
  | { kind: 'value'; read: McpResourceRead }
  | { kind: 'pending'; approval: McpApprovalView; requested: boolean }
  | { kind: 'denied'; approval: McpApprovalView }
  | { kind: 'expired'; approval: McpApprovalView; next: McpApprovalView; read: McpResourceRead | null };

/** The reason recorded with a request made by a read that gave none. */
export const DEFAULT_MCP_READ_REASON = 'Read through the Mnemo MCP server';

const PAGE = 50;

/**
 * The token hand-off, decided (docs/api.md "Access tokens"): an access token is shown once, to the approver (or to
 * the requester on auto-approval), and a client outside MCP presents it. A requester reading through the MCP server
 * needs no token: the server acts for the requester's key, finds that key's user's own approval for exactly this
 * operation (read), this registration and this URI (or a wildcard above it), and reads when that approval opens it
 * exactly as its token would (mcp-access.ts, checkApprovalAccess). The token only ever proved those same facts
 * (approved, the requester's user, operation, registration, URI, before expiresAt), so nothing is opened that the
 * token would not open; what the approver gives up is only the need to carry the token back.
 *
 * A read finding no usable approval asks for one (the caller's pending request is reused, never duplicated), so an
 * MCP client needs nothing but `resources/read`: read, show the person the approval URL, read again.
 */
export function createMcpRequesterAccess(deps: {
  resources: Pick<McpResourceRepository, 'findByUris'>;
  approvals: Pick<McpApprovalRepository, 'list' | 'find'>;
  resourceService: Pick<McpResourceService, 'readAsRequester'>;
  approvalService: Pick<McpApprovalService, 'request' | 'get' | 'show'>;
  clock: { now(): Date };
}) {
  const { approvals, clock } = deps;

  /**
   * The caller's read approvals through `registration` for `uriText` or a wildcard above it: the newest, and any
   * approved one still within its expiresAt (approvals live at most MCP_TTL_MAX_SECONDS, so older pages are skipped).
   */
  async function ownApprovals(owner: McpOwner, userId: string, registration: StoredMcpResource, uriText: string, now: Date) {
    const uri = parseUriOf(uriText, 'uri');
    const horizon = now.getTime() - MCP_TTL_MAX_SECONDS * 1000;
    let newest: StoredMcpApproval | null = null;
    let open: StoredMcpApproval | null = null;
    for (const candidate of governingCandidates(uri)) {
      let after: { requestedAt: Date; id: string } | null = null;
      for (;;) {
        const { items } = await approvals.list(owner, { resource: candidate, requestedBy: userId, limit: PAGE, after, now });
        let done = items.length < PAGE;
        for (const a of items) {
          if (a.operation !== 'read' || a.resourceId !== registration.id) continue;
          if (newest === null || a.requestedAt > newest.requestedAt) newest = a;
          if (open === null && a.status === 'approved' && a.expiresAt > now) open = a;
          // Newest first: past the horizon nothing approved is still open, and the newest of this URI is known.
          if (a.requestedAt.getTime() < horizon) done = true;
        }
        const last = items.at(-1);
        if (done || !last) break;
        after = { requestedAt: last.requestedAt, id: last.id };
      }
    }
    return { newest, open };
  }

  /** Asks for read access to `uriText` for the caller; a pending request of the caller already there is reused. */
  async function ask(caller: McpCaller, uriText: string, reason: string): Promise<{ approval: McpApprovalView; requested: boolean }> {
    try {
      const issued = await deps.approvalService.request(caller, { resource: uriText, operation: 'read', reason });
      return { approval: issued.approval, requested: true };
    } catch (err) {
      const pendingId = isDomainError(err) && err.code === 'CONFLICT' ? err.details.approvalId : undefined;
      if (typeof pendingId !== 'string') throw err;
      return { approval: await deps.approvalService.get(caller, pendingId), requested: false };
    }
  }

  /** Reads the value once `approval` (an approved request of the caller's, found or just made) opens it. */
  async function readWith(caller: McpCaller, uriText: string, approvalId: string): Promise<McpResourceRead> {
    const stored = await approvals.find({ tenantId: caller.tenantId, mode: caller.mode }, approvalId);
    if (!stored) throw new DomainError('NOT_FOUND', `MCP approval ${JSON.stringify(approvalId)} not found`);
    return deps.resourceService.readAsRequester(caller, uriText, stored);
  }

  /**
   * Reads `uriText` for the caller (the requester). Refusals are thrown as by a G11 read: 400 (not a URI, a
   * wildcard), 404 (nothing governs it, nothing stored there), 403 (the registration does not permit read).
   * `reason` goes with a request this read makes.
   */
  async function read(caller: McpCaller, uriText: string, options: { reason?: string | undefined } = {}): Promise<McpRequesterRead> {
    const uri = parseUriOf(uriText, 'uri');
    if (isWildcard(uri)) throw validationError([{ field: 'uri', reason: 'invalid_value', message: 'names several values: read one URI under it' }]);
    const text = formatMcpUri(uri);
    const owner: McpOwner = { tenantId: caller.tenantId, mode: caller.mode };
    const registration = await governingResource(deps.resources, owner, uri);
    if (!registration) throw new DomainError('NOT_FOUND', `No MCP resource governs ${text}`);
    if (!registration.requiresApproval || !registration.permissions.includes('read')) {
      // No approval to find (or the registration refuses read: the read says so, 403 operation_not_permitted).
      return { kind: 'value', read: await deps.resourceService.readAsRequester(caller, text, null) };
    }
    const now = clock.now();
    const { newest, open } = await ownApprovals(owner, caller.userId, registration, text, now);
    if (open) return { kind: 'value', read: await deps.resourceService.readAsRequester(caller, text, open) };
    const reason = options.reason ?? DEFAULT_MCP_READ_REASON;
    if (newest === null) {
      // Nothing of the caller's to show: ask.
      const asked = await ask(caller, text, reason);
      if (asked.approval.status === 'approved') return { kind: 'value', read: await readWith(caller, text, asked.approval.id) };
      return { kind: 'pending', ...asked };
    }
    const status = effectiveStatus(newest, now);
    if (status === 'pending') return { kind: 'pending', approval: deps.approvalService.show(newest), requested: false };
    if (status === 'denied' && newest.expiresAt > now) return { kind: 'denied', approval: deps.approvalService.show(newest) };
    // Over: unanswered past expiresAt, or an approval or denial whose window ended. Ask anew, and say so.
    const next = await ask(caller, text, reason);
    const value = next.approval.status === 'approved' ? await readWith(caller, text, next.approval.id) : null;
    return { kind: 'expired', approval: deps.approvalService.show(newest), next: next.approval, read: value };
  }

  return { read };
}

export type McpRequesterAccess = ReturnType<typeof createMcpRequesterAccess>;
