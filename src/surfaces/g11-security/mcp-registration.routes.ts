import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { McpResourceService } from '../../core/mcp-access/mcp-resource.service.ts';
import { mcpAuditResource } from '../../core/mcp-access/mcp-uri.ts';
import { requirePrincipal } from '../http-kit/auth.ts';
import { noteForAudit } from './audit-recorder.ts';
import { toMcpResourceWire } from './mcp.mappers.ts';
import { errors, writeErrors } from './mcp.routes.ts';
import { McpResourceUriParams, McpResponses, UpdateMcpResourceBody } from './mcp.schemas.ts';

/** The audit resource of the path's URI (an invalid one is not recorded). */
function auditResource(req: FastifyRequest): string {
  const uri = (req.params as { uri?: unknown } | undefined)?.uri;
  return mcpAuditResource(typeof uri === 'string' ? uri : undefined);
}

/**
 * Changing and deleting an MCP registration (`/v1/security/mcp/resources/:uri`, its exact registered URI,
 * URL-encoded). Registered inside the G11 plugin, after its hooks, like mcp.routes.ts.
 */
export const mcpRegistrationRoutes: FastifyPluginAsync<{ mcpResources: McpResourceService }> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['G11 MCP'];
  const security = [{ bearer: [] }];

  r.put('/v1/security/mcp/resources/:uri', {
    config: { operation: 'mcp.update', auditResource },
    schema: {
      tags, security,
      summary: 'Change an MCP registration (approvers, auto-approve, operations, name, description, a custom value); its URI stays',
      params: McpResourceUriParams, body: UpdateMcpResourceBody, response: { 200: McpResponses.resource, ...writeErrors },
    },
  }, async (req) => {
    const changed = await deps.mcpResources.update(requirePrincipal(req), req.params.uri, req.body);
    noteForAudit(req, { resourceId: changed.id, changed: Object.keys(req.body) });
    return toMcpResourceWire(changed);
  });

  r.delete('/v1/security/mcp/resources/:uri', {
    config: { operation: 'mcp.delete', auditResource },
    schema: {
      tags, security, summary: 'Delete an MCP registration and its approvals: their access tokens open nothing afterwards',
      params: McpResourceUriParams, response: { 204: McpResponses.deleted, ...errors },
    },
  }, async (req, reply) => {
    const deleted = await deps.mcpResources.delete(requirePrincipal(req), req.params.uri);
    noteForAudit(req, { resourceId: deleted.id });
    return reply.status(204).send(null);
  });
};
