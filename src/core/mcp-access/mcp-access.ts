import { digestsEqual } from '../api-keys/api-key.format.ts';
import { DomainError } from '../errors.ts';
import { digestAccessToken, isAccessTokenText } from './access-token.ts';
import type { McpApprovalRepository } from './mcp-approval.repository.ts';
import { covers, formatMcpUri, parseMcpUri, type McpUri } from './mcp-uri.ts';
import type { McpOperation, McpOwner, StoredMcpApproval, StoredMcpResource } from './mcp.types.ts';

/**
 * Why an access was refused (403 PERMISSION_DENIED, `details.reason`): the registration does not permit the
 * operation; it needs approval and no token came; the token does not open this (unknown, not approved, another
 * requester, operation or resource); or it did, until its approval's expiresAt.
 */
export type McpDenial = 'operation_not_permitted' | 'approval_required' | 'access_token_invalid' | 'access_token_expired';

/** The 403 of a refused access. `approvalId` (the token's approval, if any) is for the audit row, not the answer. */
export const accessDenied = (reason: McpDenial, uri: McpUri, operation: McpOperation, message: string, approvalId?: string) =>
  new DomainError('PERMISSION_DENIED', message, {
    reason, resource: formatMcpUri(uri), operation, ...(approvalId === undefined ? {} : { approvalId }),
  });

interface AccessCheck {
  owner: McpOwner; userId: string; registration: StoredMcpResource; uri: McpUri; operation: McpOperation; now: Date;
}

/** The registration must permit the operation; returns whether it also requires an approved request. */
function needsApproval(access: AccessCheck): boolean {
  const { registration: reg, uri, operation } = access;
  if (!reg.permissions.includes(operation)) {
    throw accessDenied('operation_not_permitted', uri, operation, `MCP resource ${reg.uri} does not permit ${operation}`);
  }
  return reg.requiresApproval;
}

/**
 * Whether `approval` opens the access: approved, not past its expiresAt, asked for by the caller's user, for this
 * operation, through this registration, for the URI or a wildcard above it. Returns its id; throws 403 otherwise.
 */
function judgeApproval(approval: StoredMcpApproval, access: AccessCheck): string {
  const { registration: reg, uri, operation } = access;
  const text = formatMcpUri(uri);
  const approvedUri = parseMcpUri(approval.resource);
  if (approval.status !== 'approved' || approval.requestedBy !== access.userId || approval.operation !== operation
    || approval.resourceId !== reg.id || approvedUri === null || !covers(approvedUri, uri)) {
    throw accessDenied('access_token_invalid', uri, operation, `This access token does not open ${operation} of ${text} for this caller`, approval.id);
  }
  if (approval.expiresAt.getTime() <= access.now.getTime()) {
    throw accessDenied('access_token_expired', uri, operation,
      `The access token of approval ${approval.id} expired at ${approval.expiresAt.toISOString()}: ask for approval again`, approval.id);
  }
  return approval.id;
}

/**
 * The access path of one operation on `uri`, which `registration` governs: the registration must permit the
 * operation, and when it requires approval the caller must present the access token of an approval that is
 * approved, not past its expiresAt, asked for by the caller's user, for this operation, through this registration,
 * for `uri` or a wildcard above it. Returns the approval's id (null when no approval is needed); throws 403 otherwise.
 */
export async function checkAccess(deps: { approvals: Pick<McpApprovalRepository, 'findByTokenDigest'> }, access: AccessCheck & {
  accessToken: string | undefined;
}): Promise<string | null> {
  const { uri, operation } = access;
  const text = formatMcpUri(uri);
  if (!needsApproval(access)) return null;
  if (access.accessToken === undefined) {
    throw accessDenied('approval_required', uri, operation, `${operation} of ${text} needs an approved request: ask for approval, then present its access token`);
  }
  const digest = isAccessTokenText(access.accessToken) ? digestAccessToken(access.accessToken) : null;
  const approval = digest === null ? null : await deps.approvals.findByTokenDigest(access.owner, digest);
  if (!approval || approval.tokenDigest === null || !digestsEqual(approval.tokenDigest, digest!)) {
    throw accessDenied('access_token_invalid', uri, operation, `This access token does not open ${operation} of ${text} for this caller`, approval?.id);
  }
  return judgeApproval(approval, access);
}

/**
 * The same access path for the requester itself, without the token (the MCP server, acting for the requester's key:
 * see requester-access.ts): `approval` is one the caller's user asked for, and it must open the access exactly as
 * its token would. Returns the approval's id (null when no approval is needed); throws 403 otherwise.
 */
export function checkApprovalAccess(approval: StoredMcpApproval | null, access: AccessCheck): string | null {
  if (!needsApproval(access)) return null;
  if (approval === null) {
    throw accessDenied('approval_required', access.uri, access.operation,
      `${access.operation} of ${formatMcpUri(access.uri)} needs an approved request`);
  }
  return judgeApproval(approval, access);
}
