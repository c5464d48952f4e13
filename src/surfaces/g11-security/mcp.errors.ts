import type { DomainErrorDetails } from '../../core/errors.ts';

/** Refusals whose way out is asking for approval (core/mcp-access/mcp-access.ts): the 403 says how. */
const ASK_FOR_APPROVAL = new Set(['approval_required', 'access_token_invalid', 'access_token_expired']);

/**
 * What a refused MCP request adds to a 403's details: `reason` (mcp-access.ts, or `not_an_approver`, `own_request`),
 * the `resource` and `operation` refused, and for a read that needs approval, `requestApproval`: the request that
 * asks for it. The approval a presented token belongs to is for the audit row only.
 */
export function mcpDeniedDetails(details: DomainErrorDetails): Record<string, unknown> {
  if (typeof details.reason !== 'string') return {};
  const { reason, resource, operation } = details;
  return {
    reason,
    ...(typeof resource === 'string' ? { resource } : {}),
    ...(typeof operation === 'string' ? { operation } : {}),
    ...(ASK_FOR_APPROVAL.has(reason) ? {
      requestApproval: { method: 'POST', path: '/v1/security/mcp/approve', body: { resource, operation, reason: '<why it is needed>' } },
    } : {}),
  };
}

/** What a 409 of an MCP approval adds: the pending approval a duplicate request met, or the status an answer came too late for. */
export function mcpConflictDetails(details: DomainErrorDetails): Record<string, unknown> {
  return {
    ...(typeof details.approvalId === 'string' ? { approvalId: details.approvalId } : {}),
    ...(typeof details.status === 'string' ? { status: details.status } : {}),
  };
}
