import { validationError } from '../errors.ts';
import type { McpResourceRepository } from './mcp-resource.repository.ts';
import { governingCandidates, MCP_URI_RULE, parseMcpUri, type McpUri } from './mcp-uri.ts';
import type { McpOwner, StoredMcpResource } from './mcp.types.ts';

/** The URI a request names, or 400 naming `field`. */
export function parseUriOf(text: string, field: string): McpUri {
  const uri = parseMcpUri(text);
  if (uri === null) throw validationError([{ field, reason: 'invalid_format', message: MCP_URI_RULE }]);
  return uri;
}

/** The owner's registration that governs `uri`: the most specific one registered (mcp-uri.ts); null when none does. */
export async function governingResource(
  resources: Pick<McpResourceRepository, 'findByUris'>, owner: McpOwner, uri: McpUri,
): Promise<StoredMcpResource | null> {
  const candidates = governingCandidates(uri);
  const found = await resources.findByUris(owner, candidates);
  for (const candidate of candidates) {
    const match = found.find((r) => r.uri === candidate);
    if (match) return match;
  }
  return null;
}
