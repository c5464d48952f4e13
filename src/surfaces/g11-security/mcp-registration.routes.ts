import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { McpResourceService } from '../../core/mcp-access/mcp-resource.service.ts';
import { parseMcpUri } from '../../core/mcp-access/mcp-uri.ts';
import { requirePrincipal } from '../http-kit/auth.ts';
import { noteForAudit } from './audit-recorder.ts';
import { G11ErrorWire } from './errors.ts';
import { MCP_AUDIT_RESOURCE_PREFIX, toMcpResourceWire } from './mcp.mappers.ts';
import { McpResourceUriParams, McpResponses, UpdateMcpResourceBody } from './mcp.schemas.ts';

/** `mcp:<uri>` of the path's URI, or `mcp` when it is not one (an invalid one is not recorded). */
function auditResource(req: FastifyRequest): string {
  const uri = (req.params as { uri?: unknown } | undefined)?.uri;
  return typeof uri === 'string' && parseMcpUri(uri) !== null ? `${MCP_AUDIT_RESOURCE_PREFIX}${uri}` : 'mcp';
}

const errors = { 400: G11ErrorWire, 401: G11ErrorWire, 403: G11ErrorWire, 404: G11ErrorWire, 429: G11ErrorWire };
const writeErrors = { ...errors, 409: G11ErrorWire, 413: G11ErrorWire, 415: G11ErrorWire };

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
