import type { ApiKeyService } from '../core/api-keys/api-key.service.ts';
import type { Principal } from '../core/api-keys/api-key.types.ts';
import type { LimitsService } from '../core/rate-limit/tier-limits.ts';

/**
 * Who an MCP server instance acts for, and how it was reached. The HTTP transport makes one per request (the key
 * already authenticated and counted by the `/mcp` route); stdio makes one per connection and authenticates the key
 * again on every call, so a revoked key stops at its next call, as on HTTP.
 */
export interface McpSession {
  /** The caller of this call: authenticated, and counted against the platform gateway limit. Throws DomainError. */
  caller(): Promise<Principal>;
  /** The workspace of a tool call that names none (`X-Workspace-ID` on HTTP, `--workspace` on stdio). */
  defaultWorkspace: string;
  /** Set when the caller may act in this workspace only (an OAuth grant's): a call naming another is refused. */
  workspaceOnly?: string;
  /** For the audit log: the transport (`mcp-http`, `mcp-stdio`), the client's address and agent, a request id. */
  transport: 'mcp-http' | 'mcp-stdio';
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

/**
 * A stdio connection's session: the key from `MNEMO_API_KEY`, authenticated and counted on every call (the
 * platform gateway limit of its tier), exactly as each HTTP request is.
 */
export function keySession(deps: { apiKeys: Pick<ApiKeyService, 'authenticate'>; limits: Pick<LimitsService, 'gateway'> }, key: string,
  options: { defaultWorkspace: string; userAgent: string | null }): McpSession {
  return {
    async caller() {
      const principal = await deps.apiKeys.authenticate(key);
      await deps.limits.gateway(principal);
      return principal;
    },
    defaultWorkspace: options.defaultWorkspace,
    transport: 'mcp-stdio',
    ip: null,
    userAgent: options.userAgent,
    requestId: null,
  };
}
