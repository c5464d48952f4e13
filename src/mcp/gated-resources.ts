import { ProtocolError, ProtocolErrorCode, ResourceTemplate, type McpServer, type ReadResourceResult } from '@modelcontextprotocol/server';
import type { Principal } from '../core/api-keys/api-key.types.ts';
import { authorize, auditStatusOf, type OperationRunner } from '../core/operations/runner.ts';
import { isDomainError } from '../core/errors.ts';
import type { McpApprovalView } from '../core/mcp-access/mcp-approval.service.ts';
import type { McpResourceRead, McpResourceService } from '../core/mcp-access/mcp-resource.service.ts';
import { isWildcard, parseMcpUri } from '../core/mcp-access/mcp-uri.ts';
import type { McpRequesterAccess, McpRequesterRead } from '../core/mcp-access/requester-access.ts';
import type { LimitsService } from '../core/rate-limit/tier-limits.ts';
import type { McpSession } from './session.ts';
import { errorBody } from './tool-errors.ts';

export interface GatedResourceDeps {
  requesterAccess: McpRequesterAccess;
  mcpResources: Pick<McpResourceService, 'list'>;
  /** Writes the audit rows of reads (core/operations: the operation's action). */
  operations: Pick<OperationRunner, 'record'>;
  /** G11's hourly limit counts these reads too: they are G11's MCP resources, reached another way. */
  limits: Pick<LimitsService, 'security'>;
}

/** `_meta` key a client may set on `resources/read`: the reason given to the approver when the read asks for approval. */
export const MCP_REASON_META = 'mnemo/reason';
/** `_meta` key of every answer: how the read went (`granted`, `pending`, `denied`, `expired`) and the approval involved. */
export const MCP_ACCESS_META = 'mnemo/access';

/** The audit resource of a URI (as G11 records its MCP rows: GET /v1/security/mcp/audit shows them). */
const auditResource = (uri: string): string => (parseMcpUri(uri) !== null ? `mcp:${uri}` : 'mcp');

const approvalJson = (a: McpApprovalView) => ({
  approvalId: a.id, status: a.status, resource: a.resource, operation: a.operation, requestedBy: a.requestedBy,
  requestedAt: a.requestedAt.toISOString(), expiresAt: a.expiresAt.toISOString(), approvalUrl: a.approvalUrl,
  respondedBy: a.respondedBy, respondedAt: a.respondedAt?.toISOString() ?? null, responseReason: a.responseReason,
});

function valueContents(uri: string, read: McpResourceRead): ReadResourceResult {
  const access = {
    access: 'granted', approvalId: read.approvalId, registeredUri: read.registration.uri, accessedAt: read.accessedAt.toISOString(),
    accessCount: read.accessCount, metadata: read.metadata,
  };
  return {
    contents: [{ uri, mimeType: read.registration.type === 'api-key' ? 'application/json' : 'text/plain', text: read.value, _meta: { [MCP_ACCESS_META]: access } }],
    _meta: { [MCP_ACCESS_META]: access },
  };
}

/** An answer without the value: what the approval says and what to do, as JSON text a model can read. */
function stateContents(uri: string, state: Record<string, unknown>): ReadResourceResult {
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(state) }], _meta: { [MCP_ACCESS_META]: state } };
}

function answerOf(uri: string, outcome: McpRequesterRead): ReadResourceResult {
  switch (outcome.kind) {
    case 'value': return valueContents(uri, outcome.read);
    case 'pending': return stateContents(uri, {
      access: 'pending', ...approvalJson(outcome.approval), requested: outcome.requested,
      message: `Reading ${uri} needs a person's approval. Ask an approver to open ${outcome.approval.approvalUrl}, then read it again (before ${outcome.approval.expiresAt.toISOString()}).`,
    });
    case 'denied': return stateContents(uri, {
      access: 'denied', ...approvalJson(outcome.approval),
      message: `Approval ${outcome.approval.id} was denied${outcome.approval.responseReason ? ` (${outcome.approval.responseReason})` : ''}: ${uri} stays closed to this caller until ${outcome.approval.expiresAt.toISOString()}.`,
    });
    case 'expired':
      if (outcome.read) return valueContents(uri, outcome.read);
      return stateContents(uri, {
        access: 'expired', ...approvalJson(outcome.approval), next: approvalJson(outcome.next),
        message: `Approval ${outcome.approval.id} is over (expired at ${outcome.approval.expiresAt.toISOString()}). A new request is pending: ask an approver to open ${outcome.next.approvalUrl}, then read again.`,
      });
  }
}

/** What the audit row of a read says: outcome, status, the approval involved, why it was refused. */
function auditOf(outcome: McpRequesterRead): { status: number; approvalId: string | null; reason?: string; requested?: McpApprovalView } {
  switch (outcome.kind) {
    case 'value': return { status: 200, approvalId: outcome.read.approvalId };
    case 'pending': return { status: 403, approvalId: outcome.approval.id, reason: 'approval_pending', ...(outcome.requested ? { requested: outcome.approval } : {}) };
    case 'denied': return { status: 403, approvalId: outcome.approval.id, reason: 'approval_denied' };
    case 'expired': return outcome.read
      ? { status: 200, approvalId: outcome.read.approvalId, requested: outcome.next }
      : { status: 403, approvalId: outcome.approval.id, reason: 'approval_expired', requested: outcome.next };
  }
}

/**
 * G11's MCP resources as MCP resources, under the spec's URI patterns (the readable ones: one secret, one API key
 * record, one custom value). A read acts for the session's key (the requester): the registration decides, and where
 * it requires approval the requester's own approval opens it, without a token (core/mcp-access/requester-access.ts);
 * without one, the read asks (or reuses the pending request) and answers with the approval's id and URL. Every read
 * is recorded in the G11 audit log (`mcp.read`, and `mcp.request` when it asked), granted or refused, as the REST
 * read is; when the row cannot be written the value is withheld.
 */
export function registerGatedResources(server: McpServer, deps: GatedResourceDeps, session: McpSession): void {
  async function record(principal: Principal, operation: 'mcp.read' | 'mcp.request' | 'mcp.list', resource: string, status: number, metadata: Record<string, unknown>) {
    await deps.operations.record(operation, principal, { ip: session.ip, userAgent: session.userAgent, requestId: session.requestId },
      { resource, metadata: { ...metadata, transport: session.transport } }, status);
  }

  /**
   * The caller of a resource request: authenticated and counted (gateway and G11 limits; refusals there leave no
   * row, as on G11), then holding mcp:access (a refusal is recorded under `action`).
   */
  async function caller(action: 'mcp.read' | 'mcp.list', resource: string): Promise<Principal> {
    let principal: Principal;
    try {
      principal = await session.caller();
      await deps.limits.security(principal);
    } catch (err) {
      throw protocolError(err);
    }
    try {
      authorize(action, principal);
    } catch (err) {
      await record(principal, action, resource, 403, action === 'mcp.read' ? { operation: 'read' } : {}).catch(() => undefined);
      throw protocolError(err);
    }
    return principal;
  }

  async function read(uri: string, reason: string | undefined): Promise<ReadResourceResult> {
    const principal = await caller('mcp.read', auditResource(uri));
    let outcome: McpRequesterRead;
    try {
      outcome = await deps.requesterAccess.read(principal, uri, { reason });
    } catch (err) {
      const status = auditStatusOf(err);
      const why = isDomainError(err) && typeof err.details.reason === 'string' ? { reason: err.details.reason } : {};
      await record(principal, 'mcp.read', auditResource(uri), status, { operation: 'read', ...why }).catch(() => undefined);
      throw protocolError(err);
    }
    const audit = auditOf(outcome);
    try {
      if (audit.requested) {
        await record(principal, 'mcp.request', auditResource(uri), 201, { approvalId: audit.requested.id, operation: 'read', status: audit.requested.status });
      }
      await record(principal, 'mcp.read', auditResource(uri), audit.status, {
        operation: 'read', approvalId: audit.approvalId, ...(audit.reason ? { reason: audit.reason } : {}),
      });
    } catch {
      // What was read never leaves unrecorded (G11 withholds its answer the same way).
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'The audit log could not record this read, so its answer was withheld');
    }
    return answerOf(uri, outcome);
  }

  const template = (pattern: string, list?: boolean) => new ResourceTemplate(pattern, {
    list: list ? async () => listed() : undefined,
  });
  /** The registrations of concrete URIs (wildcards name several values and are not listed), without values. */
  async function listed() {
    const principal = await caller('mcp.list', 'mcp:*');
    const resources: { uri: string; name: string; description: string; mimeType: string }[] = [];
    let cursor: string | null = null;
    do {
      const page = await deps.mcpResources.list(principal, { limit: 100, cursor });
      for (const r of page.items) {
        const uri = parseMcpUri(r.uri);
        if (uri === null || isWildcard(uri)) continue;
        resources.push({
          uri: r.uri, name: r.name, mimeType: r.type === 'api-key' ? 'application/json' : 'text/plain',
          description: `${r.description || r.name}${r.requiresApproval ? ' (reading it needs a person\'s approval)' : ''}`,
        });
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    await record(principal, 'mcp.list', 'mcp:*', 200, { returned: resources.length }).catch((err: unknown) => { throw protocolError(err); });
    return { resources };
  }

  const readCallback = async (url: URL, _vars: unknown, ctx: { mcpReq: { _meta?: Record<string, unknown> | undefined } }) => {
    const given = ctx.mcpReq._meta?.[MCP_REASON_META];
    return read(url.href, typeof given === 'string' && given.trim().length > 0 ? given.slice(0, 1000) : undefined);
  };
  const gated = ' Reading it through a registration that requires approval asks for one (or reuses the pending request) and '
    + 'answers {access: "pending", approvalId, approvalUrl, expiresAt}; once a listed approver approves, the same read returns the value '
    + 'until expiresAt. A denied or expired approval reads as such. Set _meta["mnemo/reason"] to tell the approver why.';

  server.registerResource('secret', template('svc://secrets/{environment}/{name}', true), {
    title: 'Secret', description: `The G11 secret named {environment}.{name}, through its MCP registration.${gated}`, mimeType: 'text/plain',
  }, readCallback);
  server.registerResource('api-key', template('svc://api-keys/{id}'), {
    title: 'API key record', description: `An API key's record as JSON (never the key itself), through its MCP registration.${gated}`,
    mimeType: 'application/json',
  }, readCallback);
  server.registerResource('custom', template('svc://custom/{type}/{id}'), {
    title: 'Custom value', description: `A value stored with its MCP registration.${gated}`, mimeType: 'text/plain',
  }, readCallback);
}

/**
 * A refused resource request as a JSON-RPC error: invalid params for what the request named wrong (400, 404: the
 * SDK reports unknown resources so too), invalid request for the other refusals (key, scope, limits), internal
 * error for a fault; `data` carries the code and details a tool error has.
 */
function protocolError(err: unknown): ProtocolError {
  const body = errorBody(err);
  const code = !isDomainError(err) ? ProtocolErrorCode.InternalError
    : err.code === 'VALIDATION_FAILED' || err.code === 'NOT_FOUND' ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InvalidRequest;
  return new ProtocolError(code, `${body.code}: ${body.message}`, body);
}
