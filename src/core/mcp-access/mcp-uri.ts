import type { FieldProblem } from '../errors.ts';
import { SECRET_NAME_PATTERN } from '../secrets/secret.rules.ts';
import type { McpResourceType } from './mcp.types.ts';

/**
 * MCP resource URIs: exactly the spec's six patterns.
 *
 *   svc://secrets/{environment}/{name}   the G11 secret named `{environment}.{name}`
 *   svc://secrets/{environment}/*        every such secret of one environment
 *   svc://secrets/*                      every such secret
 *   svc://api-keys/{id}                  the API key record `{id}` (never the key)
 *   svc://api-keys/*                     every API key record
 *   svc://custom/{type}/{id}             a value stored with the resource
 *
 * Secret names hold no `/`, so an environment is a name prefix up to the first `.` (an environment holds no dot):
 * `svc://secrets/prod/db.primary` is the secret `prod.db.primary`. Segments are plain characters (no escapes).
 */
export type McpUri =
  | { kind: 'secret'; environment: string; name: string }
  | { kind: 'environment-secrets'; environment: string }
  | { kind: 'all-secrets' }
  | { kind: 'api-key'; id: string }
  | { kind: 'all-api-keys' }
  | { kind: 'custom'; customType: string; id: string };

/** Short enough to travel URL-encoded as one path parameter (the router takes 256 characters). */
export const MCP_URI_MAX = 200;
export const MCP_URI_RULE = 'must be one of svc://secrets/{environment}/{name}, svc://secrets/{environment}/*, svc://secrets/*, '
  + 'svc://api-keys/{id}, svc://api-keys/*, svc://custom/{type}/{id}';

const ENVIRONMENT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
const API_KEY_ID = /^[A-Za-z0-9][A-Za-z0-9_]{0,63}$/;
const CUSTOM_TYPE = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const CUSTOM_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The secret a `svc://secrets/{environment}/{name}` URI names. */
export const secretNameOf = (environment: string, name: string): string => `${environment}.${name}`;

/** The URI's parts, or null when it is none of the six patterns. */
export function parseMcpUri(text: string): McpUri | null {
  if (text.length > MCP_URI_MAX) return null;
  const m = /^svc:\/\/([a-z-]+)\/(.*)$/.exec(text);
  if (!m) return null;
  const parts = m[2]!.split('/');
  switch (m[1]) {
    case 'secrets': {
      if (parts.length === 1 && parts[0] === '*') return { kind: 'all-secrets' };
      if (parts.length !== 2 || !ENVIRONMENT.test(parts[0]!)) return null;
      const [environment, name] = parts as [string, string];
      if (name === '*') return { kind: 'environment-secrets', environment };
      return SECRET_NAME_PATTERN.test(secretNameOf(environment, name)) && SECRET_NAME_PATTERN.test(name)
        ? { kind: 'secret', environment, name } : null;
    }
    case 'api-keys':
      if (parts.length !== 1) return null;
      if (parts[0] === '*') return { kind: 'all-api-keys' };
      return API_KEY_ID.test(parts[0]!) ? { kind: 'api-key', id: parts[0]! } : null;
    case 'custom':
      return parts.length === 2 && CUSTOM_TYPE.test(parts[0]!) && CUSTOM_ID.test(parts[1]!)
        ? { kind: 'custom', customType: parts[0]!, id: parts[1]! } : null;
    default:
      return null;
  }
}

/** The URI's text (parseMcpUri's inverse). */
export function formatMcpUri(uri: McpUri): string {
  switch (uri.kind) {
    case 'secret': return `svc://secrets/${uri.environment}/${uri.name}`;
    case 'environment-secrets': return `svc://secrets/${uri.environment}/*`;
    case 'all-secrets': return 'svc://secrets/*';
    case 'api-key': return `svc://api-keys/${uri.id}`;
    case 'all-api-keys': return 'svc://api-keys/*';
    case 'custom': return `svc://custom/${uri.customType}/${uri.id}`;
  }
}

export const isWildcard = (uri: McpUri): boolean =>
  uri.kind === 'environment-secrets' || uri.kind === 'all-secrets' || uri.kind === 'all-api-keys';

export function resourceTypeOf(uri: McpUri): McpResourceType {
  switch (uri.kind) {
    case 'secret': case 'environment-secrets': case 'all-secrets': return 'secret';
    case 'api-key': case 'all-api-keys': return 'api-key';
    case 'custom': return 'custom';
  }
}

/**
 * The registrations that may govern `uri`, most specific first: the URI itself, then the wildcards above it. The
 * first one registered governs alone (a more specific registration overrides a broader one, in both directions).
 */
export function governingCandidates(uri: McpUri): string[] {
  switch (uri.kind) {
    case 'secret': return [formatMcpUri(uri), `svc://secrets/${uri.environment}/*`, 'svc://secrets/*'];
    case 'environment-secrets': return [formatMcpUri(uri), 'svc://secrets/*'];
    case 'api-key': return [formatMcpUri(uri), 'svc://api-keys/*'];
    case 'all-secrets': case 'all-api-keys': case 'custom': return [formatMcpUri(uri)];
  }
}

/** Whether `pattern` names `target`: the same URI, or a wildcard above it. */
export function covers(pattern: McpUri, target: McpUri): boolean {
  return governingCandidates(target).includes(formatMcpUri(pattern));
}

export function mcpUriProblem(text: string, field: string): FieldProblem | undefined {
  return parseMcpUri(text) === null ? { field, reason: 'invalid_format', message: MCP_URI_RULE } : undefined;
}

/** The prefix of the audit-log resource of an MCP URI (`mcp:svc://secrets/prod/db`); the MCP audit shows the URI alone. */
export const MCP_AUDIT_RESOURCE_PREFIX = 'mcp:';

/** The audit resource of a named URI, as every surface records it: `mcp:<uri>`, or `mcp` when it is not a valid one. */
export const mcpAuditResource = (uri: string | undefined): string =>
  (uri !== undefined && parseMcpUri(uri) !== null ? `${MCP_AUDIT_RESOURCE_PREFIX}${uri}` : 'mcp');
