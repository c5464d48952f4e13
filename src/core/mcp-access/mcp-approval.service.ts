import type { Clock } from '../clock.ts';
import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import { prefixedId } from '../ids.ts';
import { digestAccessToken, generateAccessToken } from './access-token.ts';
import { autoApproves } from './auto-approve.ts';
import { governingResource, parseUriOf } from './governing.ts';
import type { McpApprovalRepository } from './mcp-approval.repository.ts';
import type { McpResourceRepository } from './mcp-resource.repository.ts';
import type { McpCaller } from './mcp-resource.service.ts';
import { formatMcpUri, mcpUriProblem } from './mcp-uri.ts';
import {
  isMcpOperation, MCP_TTL_DEFAULT_SECONDS, mcpReasonProblem, ttlProblem, userIdProblem,
} from './mcp.rules.ts';
import {
  AUTO_APPROVER, effectiveStatus, MCP_APPROVAL_STATUSES, MCP_OPERATIONS, type McpApprovalStatus, type McpOperation, type McpOwner,
  type StoredMcpApproval,
} from './mcp.types.ts';

export interface McpApprovalRequest {
  resource: string;
  /** Default `read`. */
  operation?: string | undefined;
  reason: string;
  /** The caller's own user id (the default): nobody asks in another's name. */
  requestedBy?: string | undefined;
  /** Seconds until the approval expires (default 3600). */
  ttl?: number | undefined;
}

export interface McpApprovalResponse {
  action: 'approve' | 'deny';
  reason?: string | undefined;
  /** The caller's own user id (the default): nobody answers in another's name. */
  approvedBy?: string | undefined;
}

/** An approval as shown: its status as it reads now, and where a person answers it. Never its token. */
export type McpApprovalView = Omit<StoredMcpApproval, 'owner' | 'resourceId' | 'tokenDigest'> & { approvalUrl: string };

/** An approval as made or answered: the access token is in this answer only (null unless approved). */
export interface IssuedMcpApproval {
  approval: McpApprovalView;
  accessToken: string | null;
}

export type McpApprovalService = ReturnType<typeof createMcpApprovalService>;

const ownerOf = (caller: McpCaller): McpOwner => ({ tenantId: caller.tenantId, mode: caller.mode });
const notFound = (id: string) => new DomainError('NOT_FOUND', `MCP approval ${JSON.stringify(id)} not found`);
const actingAs = (field: string, given: string, caller: McpCaller) => new DomainError('PERMISSION_DENIED',
  `${field} must be the calling key's user (${caller.userId}), not ${JSON.stringify(given)}: nobody acts in another's name`, { field });

/** Cursors are opaque to clients: the last approval of a page (requestedAt and id), in base64url. */
const encodeCursor = (a: StoredMcpApproval): string => Buffer.from(`a:${a.requestedAt.getTime()}:${a.id}`, 'utf8').toString('base64url');
function decodeCursor(cursor: string): { requestedAt: Date; id: string } {
  const m = /^a:(\d{1,15}):([A-Za-z0-9_]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError([{ field: 'cursor', reason: 'invalid_value', message: 'is not a cursor of this list' }]);
  return { requestedAt: new Date(Number(m[1])), id: m[2]! };
}

function check(problems: (FieldProblem | undefined)[]): void {
  const found = problems.filter((p): p is FieldProblem => p !== undefined);
  if (found.length > 0) throw validationError(found);
}

/** Why an answer came too late or twice (409), from the approval as it now reads. */
function alreadyAnswered(a: StoredMcpApproval, now: Date): DomainError {
  const status = effectiveStatus(a, now);
  return new DomainError('CONFLICT', status === 'expired'
    ? `MCP approval ${a.id} expired at ${a.expiresAt.toISOString()} without an answer: it can no longer be answered`
    : `MCP approval ${a.id} was already answered (${status})`, { status });
}

/**
 * Approvals of MCP access, per owner (tenant + mode). A requester asks for one operation on a URI (for itself only);
 * the registration governing the URI decides who answers (its approvers, never the requester) and whether the
 * request is approved at once (its autoApprove conditions). An approval issues an access token, shown once, that
 * opens that operation on that URI (or under that wildcard) for the requester until the approval's expiresAt.
 */
export function createMcpApprovalService(deps: {
  resources: Pick<McpResourceRepository, 'findByUris' | 'findById'>;
  approvals: McpApprovalRepository;
  clock: Clock;
  /** MNEMO_DASHBOARD_URL: approvals are answered at `<dashboardUrl>/approvals/<approvalId>`. */
  dashboardUrl: string;
}) {
  const { resources, approvals, clock } = deps;
  const base = deps.dashboardUrl.replace(/\/+$/, '');
  const view = (a: StoredMcpApproval, now: Date): McpApprovalView => ({
    id: a.id, resource: a.resource, operation: a.operation, reason: a.reason, requestedBy: a.requestedBy, requestedAt: a.requestedAt,
    expiresAt: a.expiresAt, status: effectiveStatus(a, now), approvalUrl: `${base}/approvals/${a.id}`, respondedBy: a.respondedBy,
    respondedAt: a.respondedAt, responseReason: a.responseReason, autoApproved: a.autoApproved,
  });

  async function request(caller: McpCaller, input: McpApprovalRequest): Promise<IssuedMcpApproval> {
    const operation = input.operation ?? 'read';
    const ttl = input.ttl ?? MCP_TTL_DEFAULT_SECONDS;
    check([
      mcpUriProblem(input.resource, 'resource'),
      isMcpOperation(operation) ? undefined : { field: 'operation', reason: 'invalid_value', message: `must be one of: ${MCP_OPERATIONS.join(', ')}` },
      mcpReasonProblem(input.reason), ttlProblem(ttl),
      input.requestedBy === undefined ? undefined : userIdProblem(input.requestedBy, 'requestedBy'),
    ]);
    if (input.requestedBy !== undefined && input.requestedBy !== caller.userId) throw actingAs('requestedBy', input.requestedBy, caller);
    const owner = ownerOf(caller);
    const uri = parseUriOf(input.resource, 'resource');
    const text = formatMcpUri(uri);
    const registration = await governingResource(resources, owner, uri);
    if (!registration) throw new DomainError('NOT_FOUND', `No MCP resource governs ${text}`);
    if (!registration.requiresApproval) {
      throw new DomainError('CONFLICT', `MCP resource ${registration.uri} does not require approval: read ${text} directly`, { field: 'resource' });
    }
    if (!registration.permissions.includes(operation as McpOperation)) {
      throw validationError([{ field: 'operation', reason: 'invalid_value', message: `is not permitted by MCP resource ${registration.uri} (${registration.permissions.join(', ')})` }]);
    }
    const now = clock.now();
    const approval: StoredMcpApproval = {
      id: prefixedId('appr', 24), owner, resourceId: registration.id, resource: text, operation: operation as McpOperation,
      reason: input.reason, requestedBy: caller.userId, requestedAt: now, expiresAt: new Date(now.getTime() + ttl * 1000),
      status: 'pending', respondedBy: null, respondedAt: null, responseReason: null, autoApproved: false, tokenDigest: null,
    };
    let accessToken: string | null = null;
    if (autoApproves(registration.autoApprove, caller.userId, now)) {
      accessToken = generateAccessToken();
      Object.assign(approval, {
        status: 'approved', respondedBy: AUTO_APPROVER, respondedAt: now, autoApproved: true, tokenDigest: digestAccessToken(accessToken),
      } satisfies Partial<StoredMcpApproval>);
    }
    await approvals.insert(approval, now);
    return { approval: view(approval, now), accessToken };
  }

  /**
   * Answers a pending approval. Only an approver of the governing registration answers, never the requester itself,
   * once, before expiresAt: a second answer, or one after expiresAt, is 409 (and the approval then reads `expired`
   * where it timed out). Of two concurrent answers one is stored and the other is 409.
   */
  async function respond(caller: McpCaller, id: string, input: McpApprovalResponse): Promise<IssuedMcpApproval> {
    check([
      input.reason === undefined ? undefined : mcpReasonProblem(input.reason),
      input.approvedBy === undefined ? undefined : userIdProblem(input.approvedBy, 'approvedBy'),
    ]);
    const owner = ownerOf(caller);
    const approval = await approvals.find(owner, id);
    if (!approval) throw notFound(id);
    const registration = await resources.findById(owner, approval.resourceId);
    if (!registration || !registration.approvers.includes(caller.userId)) {
      throw new DomainError('PERMISSION_DENIED', `User ${caller.userId} is not an approver of MCP resource ${registration?.uri ?? approval.resource}`,
        { reason: 'not_an_approver' });
    }
    if (input.approvedBy !== undefined && input.approvedBy !== caller.userId) throw actingAs('approvedBy', input.approvedBy, caller);
    if (approval.requestedBy === caller.userId) {
      throw new DomainError('PERMISSION_DENIED', 'An approver cannot answer a request of their own', { reason: 'own_request' });
    }
    const now = clock.now();
    if (effectiveStatus(approval, now) !== 'pending') throw alreadyAnswered((await approvals.expire(owner, id, now)) ?? approval, now);
    const accessToken = input.action === 'approve' ? generateAccessToken() : null;
    const stored = await approvals.respond(owner, id, {
      status: input.action === 'approve' ? 'approved' : 'denied', respondedBy: caller.userId, respondedAt: now,
      responseReason: input.reason ?? null, tokenDigest: accessToken === null ? null : digestAccessToken(accessToken),
    });
    // Another answer was stored first, or the approval expired in between.
    if (!stored) throw alreadyAnswered((await approvals.expire(owner, id, now)) ?? approval, now);
    return { approval: view(stored, now), accessToken };
  }

  /** Newest first; `cursor` continues after the previous page (null: from the newest). */
  async function list(caller: McpCaller, q: { status?: string | undefined; resource?: string | undefined; limit: number; cursor: string | null }):
    Promise<{ items: McpApprovalView[]; total: number; nextCursor: string | null }> {
    check([
      q.status === undefined || (MCP_APPROVAL_STATUSES as readonly string[]).includes(q.status) ? undefined
        : { field: 'status', reason: 'invalid_value', message: `must be one of: ${MCP_APPROVAL_STATUSES.join(', ')}` },
      q.resource === undefined ? undefined : mcpUriProblem(q.resource, 'resource'),
    ]);
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const now = clock.now();
    // One more than asked tells whether another page follows.
    const { items, total } = await approvals.list(ownerOf(caller), {
      ...(q.status === undefined ? {} : { status: q.status as McpApprovalStatus }), ...(q.resource === undefined ? {} : { resource: q.resource }),
      limit: q.limit + 1, after, now,
    });
    const page = items.slice(0, q.limit);
    return { items: page.map((a) => view(a, now)), total, nextCursor: items.length > q.limit ? encodeCursor(page.at(-1)!) : null };
  }

  async function get(caller: McpCaller, id: string): Promise<McpApprovalView> {
    const approval = await approvals.find(ownerOf(caller), id);
    if (!approval) throw notFound(id);
    return view(approval, clock.now());
  }

  /** A stored approval as shown now (for callers that found it themselves: requester-access.ts). */
  const show = (a: StoredMcpApproval): McpApprovalView => view(a, clock.now());

  return { request, respond, list, get, show };
}
