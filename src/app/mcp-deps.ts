import type { McpServerDeps } from '../mcp/mcp-server.ts';
import type { Container } from './container.ts';

/** The services the MCP server uses, on both transports: the same instances the REST surfaces use. */
export const mcpDeps = (c: Container): McpServerDeps => ({
  memories: c.memories, search: c.search, topics: c.topics, requesterAccess: c.mcpRequesterAccess, mcpResources: c.mcpResources,
  operations: c.operations, limits: c.limits, clock: c.clock, memoryForget: c.memoryForget, ingestion: c.ingestion,
});
