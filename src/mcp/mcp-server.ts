import { McpServer } from '@modelcontextprotocol/server';
import { registerForgetTool, type ForgetToolDeps } from './forget-tool.ts';
import { registerGatedResources, type GatedResourceDeps } from './gated-resources.ts';
import { registerIngestTools, type IngestToolDeps } from './ingest-tools.ts';
import { registerLifecycleTools } from './lifecycle-tools.ts';
import { registerMemoryTools, type MemoryToolDeps } from './memory-tools.ts';
import type { McpSession } from './session.ts';

export type McpServerDeps = MemoryToolDeps & GatedResourceDeps & ForgetToolDeps & IngestToolDeps;

export const MCP_SERVER_INSTRUCTIONS = 'Mnemo keeps memories for you: store facts and notes with memory_create, find them with '
  + 'memory_search (hybrid by default), and read, change or remove them with memory_get, memory_update and memory_delete. '
  + 'Facts change: memory_create answers `related`, memories that read nearly the same; when one states an older version of '
  + 'the fact you just stored, memory_supersede it (id: the old, by: the new) so searches return only what holds now. '
  + 'Similar is not the same fact: never supersede on similarity alone. memory_history shows earlier versions and the chain. '
  + 'memory_ingest hands over a whole conversation; what it proposes may wait for a person\'s review (memory_ingest_status). '
  + 'Secrets and other guarded values are resources (svc://secrets/{environment}/{name}, svc://api-keys/{id}, '
  + 'svc://custom/{type}/{id}); reading one may need a person\'s approval: the answer then gives an approvalUrl to show them.';

/**
 * One MCP server instance over the core, acting for one session (a stdio connection, or one HTTP request): the
 * memory tools and the approval-gated resources. Transport-free: app/ connects it to stdio or to `/mcp`.
 */
export function createMnemoMcpServer(deps: McpServerDeps, session: McpSession, info: { version: string }): McpServer {
  const server = new McpServer({ name: 'mnemo', title: 'Mnemo', version: info.version }, { instructions: MCP_SERVER_INSTRUCTIONS });
  registerMemoryTools(server, deps, session);
  registerLifecycleTools(server, deps, session);
  registerForgetTool(server, deps, session);
  registerIngestTools(server, deps, session);
  registerGatedResources(server, deps, session);
  return server;
}
