import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuditService } from '../../core/audit/audit.service.ts';
import { isDomainError, validationError } from '../../core/errors.ts';
import type { McpApprovalService } from '../../core/mcp-access/mcp-approval.service.ts';
import type { McpResourceService } from '../../core/mcp-access/mcp-resource.service.ts';
import { MCP_AUDIT_RESOURCE_PREFIX, mcpAuditResource, mcpUriProblem } from '../../core/mcp-access/mcp-uri.ts';
import { requirePrincipal } from '../http-kit/auth.ts';
import { noteForAudit } from './audit-recorder.ts';
import { G11ErrorWire } from './errors.ts';
import {
  toIssuedMcpApprovalWire, toMcpApprovalWire, toMcpAuditEntryWire, toMcpResourceReadWire, toMcpResourceWire,
} from './mcp.mappers.ts';
import {
  CreateMcpResourceBody, ListMcpApprovalsQuery, ListMcpResourcesQuery, McpAccessHeaders, McpApprovalIdParams, McpAuditQuery,
  McpResourceUriParams, McpResponses, RequestMcpApprovalBody, RespondMcpApprovalBody,
} from './mcp.schemas.ts';

export interface McpRouteDeps {
  mcpResources: McpResourceService;
  mcpApprovals: McpApprovalService;
  audit: Pick<AuditService, 'list'>;
}

/** A request's path parameter or body field, when it is text. */
const textOf = (source: unknown, field: string): string | undefined => {
  const v = source !== null && typeof source === 'object' ? (source as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' ? v : undefined;
};
const approvalResource = (id: string | undefined): string => (id !== undefined && /^appr_[A-Za-z0-9]{1,60}$/.test(id) ? `mcp-approval:${id}` : 'mcp-approval');

/** The error answers of the MCP routes (mcp-registration.routes.ts's too). */
export const errors = { 400: G11ErrorWire, 401: G11ErrorWire, 403: G11ErrorWire, 404: G11ErrorWire, 429: G11ErrorWire };
export const writeErrors = { ...errors, 409: G11ErrorWire, 413: G11ErrorWire, 415: G11ErrorWire };

/** Notes what a refused request's error says about the approval involved (never the token) in its audit row. */
async function auditedFailure<T>(req: FastifyRequest, note: Record<string, unknown>, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isDomainError(err)) {
      noteForAudit(req, {
        ...note,
        ...(typeof err.details.reason === 'string' ? { reason: err.details.reason } : {}),
        ...(typeof err.details.approvalId === 'string' ? { approvalId: err.details.approvalId } : {}),
      });
    }
    throw err;
  }
}

/**
 * G11 MCP resources and approvals (`/v1/security/mcp/…`). Registered inside the G11 plugin, after its hooks:
 * authentication, the gateway and G11 limits, the G11 error envelope and the audit recorder apply.
 */
export const mcpRoutes: FastifyPluginAsync<McpRouteDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['G11 MCP'];
  const security = [{ bearer: [] }];
  const caller = requirePrincipal;

  r.post('/v1/security/mcp/resources', {
    config: { operation: 'mcp.register', auditResource: (req) => mcpAuditResource(textOf(req.body, 'uri')) },
    schema: {
      tags, security, summary: 'Register an MCP resource: the access path of MCP clients to what its URI names',
      body: CreateMcpResourceBody, response: { 201: McpResponses.resource, ...writeErrors },
    },
  }, async (req, reply) => {
    const registered = await deps.mcpResources.register(caller(req), req.body);
    noteForAudit(req, { resourceId: registered.id });
    return reply.status(201).send(toMcpResourceWire(registered));
  });

  r.get('/v1/security/mcp/resources', {
    config: { operation: 'mcp.list', auditResource: () => `${MCP_AUDIT_RESOURCE_PREFIX}*` },
    schema: {
      tags, security, summary: 'List the MCP resources (URIs ascending, no values)',
      querystring: ListMcpResourcesQuery, response: { 200: McpResponses.resources, ...errors },
    },
  }, async (req) => {
    const page = await deps.mcpResources.list(caller(req), { limit: req.query.limit, cursor: req.query.cursor ?? null });
    noteForAudit(req, { returned: page.items.length });
    return {
      resources: page.items.map(toMcpResourceWire),
      pagination: { cursor: page.nextCursor, hasMore: page.nextCursor !== null, totalCount: page.total },
    };
  });

  r.get('/v1/security/mcp/resources/:uri', {
    config: { operation: 'mcp.read', auditResource: (req) => mcpAuditResource(textOf(req.params, 'uri')) },
    schema: {
      tags, security,
      summary: 'Read the value at a URI (URL-encoded) through its access path; one that requires approval needs X-MCP-Access-Token',
      headers: McpAccessHeaders, params: McpResourceUriParams, response: { 200: McpResponses.read, ...errors },
    },
  }, async (req) => {
    const who = caller(req);
    const read = await auditedFailure(req, { operation: 'read' },
      () => deps.mcpResources.read(who, req.params.uri, req.headers['x-mcp-access-token']));
    noteForAudit(req, { operation: 'read', resourceId: read.registration.id, approvalId: read.approvalId });
    return toMcpResourceReadWire(read);
  });

  r.post('/v1/security/mcp/approve', {
    config: { operation: 'mcp.request', auditResource: (req) => mcpAuditResource(textOf(req.body, 'resource')) },
    schema: {
      tags, security, summary: 'Ask for approval of one operation on an MCP resource, for the calling key\'s user',
      body: RequestMcpApprovalBody, response: { 201: McpResponses.issued, ...writeErrors },
    },
  }, async (req, reply) => {
    const who = caller(req);
    const issued = await auditedFailure(req, {}, () => deps.mcpApprovals.request(who, req.body));
    noteForAudit(req, { approvalId: issued.approval.id, operation: issued.approval.operation, status: issued.approval.status });
    return reply.status(201).send(toIssuedMcpApprovalWire(issued));
  });

  r.get('/v1/security/mcp/approvals', {
    config: { operation: 'mcp.approval_list', auditResource: () => 'mcp-approval:*' },
    schema: {
      tags, security, summary: 'List MCP approvals, newest first, by status and resource',
      querystring: ListMcpApprovalsQuery, response: { 200: McpResponses.approvals, ...errors },
    },
  }, async (req) => {
    const { status, resource, limit, cursor } = req.query;
    const page = await deps.mcpApprovals.list(caller(req), { status, resource, limit, cursor: cursor ?? null });
    noteForAudit(req, { returned: page.items.length });
    return {
      data: page.items.map(toMcpApprovalWire),
      pagination: { cursor: page.nextCursor, hasMore: page.nextCursor !== null, totalCount: page.total },
    };
  });

  r.get('/v1/security/mcp/approvals/:id', {
    config: { operation: 'mcp.approval_read', auditResource: (req) => approvalResource(textOf(req.params, 'id')) },
    schema: { tags, security, summary: 'Read an MCP approval (never its token)', params: McpApprovalIdParams, response: { 200: McpResponses.approval, ...errors } },
  }, async (req) => toMcpApprovalWire(await deps.mcpApprovals.get(caller(req), req.params.id)));

  r.post('/v1/security/mcp/approvals/:id/respond', {
    config: { operation: 'mcp.respond', auditResource: (req) => approvalResource(textOf(req.params, 'id')) },
    schema: {
      tags, security, summary: 'Approve or deny a pending MCP approval (listed approvers only); an approval\'s access token is in this answer only',
      params: McpApprovalIdParams, body: RespondMcpApprovalBody, response: { 200: McpResponses.issued, ...writeErrors },
    },
  }, async (req) => {
    const who = caller(req);
    const note = { approvalId: req.params.id, action: req.body.action };
    const issued = await auditedFailure(req, note, () => deps.mcpApprovals.respond(who, req.params.id, req.body));
    noteForAudit(req, note);
    return toIssuedMcpApprovalWire(issued);
  });

  r.get('/v1/security/mcp/audit', {
    config: { operation: 'audit.mcp', auditResource: () => 'audit-log:mcp' },
    schema: {
      tags, security, summary: 'The MCP audit: every MCP request of this tenant and mode (reads granted and refused, approvals), newest first',
      querystring: McpAuditQuery, response: { 200: McpResponses.audit, ...errors },
    },
  }, async (req) => {
    const who = caller(req);
    const { resource, actor, limit, cursor } = req.query;
    const problem = resource === undefined ? undefined : mcpUriProblem(resource, 'resource');
    if (problem) throw validationError([problem]);
    const page = await deps.audit.list({ tenantId: who.tenantId, mode: who.mode }, {
      action: 'mcp.*', actor, resource: resource === undefined ? undefined : `${MCP_AUDIT_RESOURCE_PREFIX}${resource}`,
    }, { limit, cursor: cursor ?? null });
    noteForAudit(req, { returned: page.items.length });
    return {
      logs: page.items.map(toMcpAuditEntryWire),
      pagination: { cursor: page.nextCursor, hasMore: page.nextCursor !== null, totalCount: page.total },
    };
  });
};
