import { MCP_AUDIT_RESOURCE_PREFIX } from '../../core/mcp-access/mcp-uri.ts';
import type { AuditRow } from '../../core/audit/audit.types.ts';
import { isoTimestamp } from '../../core/clock.ts';
import type { IssuedMcpApproval, McpApprovalView } from '../../core/mcp-access/mcp-approval.service.ts';
import type { McpResourceRead, McpResourceView } from '../../core/mcp-access/mcp-resource.service.ts';

export const toMcpResourceWire = (r: McpResourceView) => ({
  id: r.id, uri: r.uri, name: r.name, description: r.description, type: r.type, permissions: r.permissions,
  requiresApproval: r.requiresApproval, approvers: r.approvers, autoApprove: r.autoApprove, createdAt: isoTimestamp(r.createdAt),
  createdBy: r.createdBy,
});

/** A read: the governing registration's fields, under the URI that was read, with the value and the access figures. */
export const toMcpResourceReadWire = (r: McpResourceRead) => ({
  ...toMcpResourceWire(r.registration), uri: r.uri, value: r.value, metadata: r.metadata,
  accessedAt: isoTimestamp(r.accessedAt), accessCount: r.accessCount,
});

const orNull = (d: Date | null): string | null => (d === null ? null : isoTimestamp(d));

/** An approval as G11 shows it: who answered is approvedBy/approvedAt or deniedBy/deniedAt, after the answer. */
export const toMcpApprovalWire = (a: McpApprovalView) => ({
  approvalId: a.id, status: a.status, resource: a.resource, operation: a.operation, reason: a.reason, requestedBy: a.requestedBy,
  requestedAt: isoTimestamp(a.requestedAt), expiresAt: isoTimestamp(a.expiresAt), approvalUrl: a.approvalUrl,
  approvedBy: a.status === 'approved' ? a.respondedBy : null,
  approvedAt: a.status === 'approved' ? orNull(a.respondedAt) : null,
  deniedBy: a.status === 'denied' ? a.respondedBy : null,
  deniedAt: a.status === 'denied' ? orNull(a.respondedAt) : null,
  responseReason: a.responseReason, autoApproved: a.autoApproved,
});

export const toIssuedMcpApprovalWire = (issued: IssuedMcpApproval) => ({ ...toMcpApprovalWire(issued.approval), accessToken: issued.accessToken });


/**
 * A row of the G11 audit log (an `mcp.*` action) as the spec's MCP audit entry: operation is the action's verb,
 * approvalId and the refusal's reason come from the row's metadata.
 */
export const toMcpAuditEntryWire = (r: AuditRow) => ({
  id: r.id,
  timestamp: isoTimestamp(r.timestamp),
  resource: r.resource.startsWith(MCP_AUDIT_RESOURCE_PREFIX) ? r.resource.slice(MCP_AUDIT_RESOURCE_PREFIX.length) : r.resource,
  operation: r.action.slice(r.action.indexOf('.') + 1),
  actor: r.actor.userId,
  approvalId: typeof r.metadata.approvalId === 'string' ? r.metadata.approvalId : null,
  success: r.outcome === 'success',
  status: r.status,
  metadata: { ipAddress: r.ip, userAgent: r.userAgent, ...(typeof r.metadata.reason === 'string' ? { reason: r.metadata.reason } : {}) },
});
