import type { FastifyInstance } from 'fastify';

/** A G11 MCP client (`/v1/security/mcp/…`, Authorization: Bearer) bound to one key. */
export function g11Mcp(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  const q = (query: string) => (query ? `?${query}` : '');
  return {
    register: (body: unknown) => app.inject({ method: 'POST', url: '/v1/security/mcp/resources', headers: h, payload: body as object }),
    list: (query = '') => app.inject({ method: 'GET', url: `/v1/security/mcp/resources${q(query)}`, headers: h }),
    /** The URI travels URL-encoded as one path segment; `token` goes in X-MCP-Access-Token. */
    read: (uri: string, token?: string) => app.inject({
      method: 'GET', url: `/v1/security/mcp/resources/${encodeURIComponent(uri)}`,
      headers: { ...h, ...(token === undefined ? {} : { 'x-mcp-access-token': token }) },
    }),
    /** Changes the registration at exactly `uri` (URL-encoded as one path segment). */
    update: (uri: string, body: unknown) => app.inject({
      method: 'PUT', url: `/v1/security/mcp/resources/${encodeURIComponent(uri)}`, headers: h, payload: body as object,
    }),
    remove: (uri: string) => app.inject({ method: 'DELETE', url: `/v1/security/mcp/resources/${encodeURIComponent(uri)}`, headers: h }),
    approve: (body: unknown) => app.inject({ method: 'POST', url: '/v1/security/mcp/approve', headers: h, payload: body as object }),
    respond: (id: string, body: unknown) => app.inject({
      method: 'POST', url: `/v1/security/mcp/approvals/${encodeURIComponent(id)}/respond`, headers: h, payload: body as object,
    }),
    approvals: (query = '') => app.inject({ method: 'GET', url: `/v1/security/mcp/approvals${q(query)}`, headers: h }),
    approval: (id: string) => app.inject({ method: 'GET', url: `/v1/security/mcp/approvals/${encodeURIComponent(id)}`, headers: h }),
    audit: (query = '') => app.inject({ method: 'GET', url: `/v1/security/mcp/audit${q(query)}`, headers: h }),
  };
}

export type McpClient = ReturnType<typeof g11Mcp>;
