import { requirePermission } from '../api-keys/api-key.service.ts';
import type { ApiKeyRepository } from '../api-keys/api-key.repository.ts';
import type { Principal } from '../api-keys/api-key.types.ts';
import type { Clock } from '../clock.ts';
import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import { prefixedId } from '../ids.ts';
import { seal, type Keyring } from '../secrets/envelope.ts';
import { secretValueProblem } from '../secrets/secret.rules.ts';
import type { SecretService } from '../secrets/secret.service.ts';
import { governingResource, parseUriOf } from './governing.ts';
import { checkAccess, checkApprovalAccess } from './mcp-access.ts';
import type { McpApprovalRepository } from './mcp-approval.repository.ts';
import type { McpResourceRepository } from './mcp-resource.repository.ts';
import { formatMcpUri, isWildcard, mcpUriProblem, parseMcpUri, resourceTypeOf, type McpUri } from './mcp-uri.ts';
import { createMcpValueReader } from './mcp-value.ts';
import {
  autoApproveProblems, MCP_APPROVERS_MAX, mcpDescriptionProblem, mcpNameProblem, permissionsProblems, userIdsProblems,
} from './mcp.rules.ts';
import {
  mcpResourceValueContext, type AutoApprove, type McpOperation, type McpOwner, type StoredMcpApproval, type StoredMcpResource,
} from './mcp.types.ts';

/** Who calls: the key's tenant, mode and user, and its scopes (registering API-key access needs apikeys:manage). */
export type McpCaller = Pick<Principal, 'tenantId' | 'mode' | 'userId' | 'scopes'>;

export interface McpResourceInput {
  uri: string;
  name: string;
  /** Default empty. */
  description?: string | undefined;
  /** Derived from the URI; when given it must match. */
  type?: string | undefined;
  /** Default `['read']`. */
  permissions?: string[] | undefined;
  /** Default true: an access path opens without a person only when asked for explicitly. */
  requiresApproval?: boolean | undefined;
  approvers?: string[] | undefined;
  autoApprove?: { enabled: boolean; conditions?: { timeWindow?: string | undefined; requester?: string[] | undefined } | undefined } | undefined;
  /** A custom resource's value (required there, refused elsewhere); sealed like a secret. */
  value?: string | undefined;
}

/**
 * A change to a registration: the fields given replace the stored ones (autoApprove as a whole); its URI and type
 * are its identity and stay. `value` replaces a custom resource's value (refused elsewhere).
 */
export type McpResourceChange = Partial<Omit<McpResourceInput, 'uri' | 'type'>>;

/** A registration as shown: never its value (nor its owner, which is the caller, or its access figures). */
export type McpResourceView = Omit<StoredMcpResource, 'owner' | 'sealedValue' | 'accessedAt' | 'accessCount'>;

/** One read: the URI read, the registration that governed it, the value, and the registration's access figures. */
export interface McpResourceRead {
  uri: string;
  registration: McpResourceView;
  value: string;
  metadata: Record<string, unknown>;
  accessedAt: Date;
  accessCount: number;
  /** The approval whose token opened it; null when the registration needs none. */
  approvalId: string | null;
}

export type McpResourceService = ReturnType<typeof createMcpResourceService>;

const ownerOf = (caller: McpCaller): McpOwner => ({ tenantId: caller.tenantId, mode: caller.mode });
const unique = <T>(items: readonly T[]): T[] => [...new Set(items)];

/** Cursors are opaque to clients: the last URI of a page, in base64url. */
const encodeCursor = (uri: string): string => Buffer.from(`u:${uri}`, 'utf8').toString('base64url');
function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('u:') || parseMcpUri(text.slice(2)) === null) {
    throw validationError([{ field: 'cursor', reason: 'invalid_value', message: 'is not a cursor of this list' }]);
  }
  return text.slice(2);
}

/** Auto-approve settings as stored: disabled when not given, a time window trimmed, requesters once each. */
function autoApproveOf(input: McpResourceInput['autoApprove']): AutoApprove {
  const conditions = input?.conditions ?? {};
  return {
    enabled: input?.enabled ?? false,
    conditions: {
      ...(conditions.timeWindow === undefined ? {} : { timeWindow: conditions.timeWindow.trim() }),
      ...(conditions.requester === undefined ? {} : { requester: unique(conditions.requester) }),
    },
  };
}

export const toMcpResourceView = (r: StoredMcpResource): McpResourceView => ({
  id: r.id, uri: r.uri, type: r.type, name: r.name, description: r.description, permissions: r.permissions,
  requiresApproval: r.requiresApproval, approvers: r.approvers, autoApprove: r.autoApprove, createdAt: r.createdAt, createdBy: r.createdBy,
});

/**
 * MCP resources of one owner (tenant + mode): registering access paths, listing them, and reading through them.
 * A read is allowed only through the registration that governs the URI (the most specific one), and, when that
 * registration requires approval, only with the access token of an approval for the caller (mcp-access.ts).
 */
export function createMcpResourceService(deps: {
  resources: McpResourceRepository;
  approvals: Pick<McpApprovalRepository, 'findByTokenDigest'>;
  secrets: Pick<SecretService, 'get'>;
  apiKeys: Pick<ApiKeyRepository, 'find'>;
  keyring: () => Keyring;
  clock: Clock;
}) {
  const { resources, clock } = deps;
  const valueAt = createMcpValueReader(deps);

  async function register(caller: McpCaller, input: McpResourceInput): Promise<McpResourceView> {
    const problems: FieldProblem[] = [];
    const add = (...found: (FieldProblem | undefined)[]) => problems.push(...found.filter((p): p is FieldProblem => p !== undefined));
    add(mcpUriProblem(input.uri, 'uri'), mcpNameProblem(input.name));
    if (input.description !== undefined) add(mcpDescriptionProblem(input.description));
    const permissions = unique(input.permissions ?? ['read']);
    add(...permissionsProblems(permissions));
    const approvers = unique(input.approvers ?? []);
    add(...userIdsProblems(approvers, 'approvers', MCP_APPROVERS_MAX));
    const requiresApproval = input.requiresApproval ?? true;
    if (requiresApproval && approvers.length === 0) {
      add({ field: 'approvers', reason: 'too_few', message: 'must name at least one user id when requiresApproval is true (the default)' });
    }
    const autoApprove = autoApproveOf(input.autoApprove);
    add(...autoApproveProblems(autoApprove));
    const uri = parseMcpUri(input.uri);
    const type = uri === null ? null : resourceTypeOf(uri);
    if (type !== null && input.type !== undefined && input.type !== type) {
      add({ field: 'type', reason: 'invalid_value', message: `is ${type} for a URI of this pattern` });
    }
    if (type === 'custom') add(input.value === undefined ? { field: 'value', reason: 'required', message: 'is required for a svc://custom/ resource' } : secretValueProblem(input.value));
    else if (input.value !== undefined) add({ field: 'value', reason: 'not_allowed', message: 'is stored only with a svc://custom/ resource (the others read theirs)' });
    if (problems.length > 0 || uri === null || type === null) throw validationError(problems);
    // Registering access to API key records hands them to MCP clients: it needs the scope that reads them.
    if (type === 'api-key') requirePermission(caller, 'apikeys:manage');

    const owner = ownerOf(caller);
    const id = prefixedId('mcr', 24);
    const stored: StoredMcpResource = {
      id, owner, uri: formatMcpUri(uri), type, name: input.name.trim(), description: input.description ?? '',
      permissions: permissions as McpOperation[], requiresApproval,
      approvers, autoApprove,
      sealedValue: type === 'custom' ? seal(deps.keyring(), mcpResourceValueContext(owner, id), input.value!) : null,
      createdAt: clock.now(), createdBy: caller.userId, accessedAt: null, accessCount: 0,
    };
    await resources.insert(stored);
    return toMcpResourceView(stored);
  }

  /** The owner's registration with exactly this URI (a wildcard names its own registration here); 404 otherwise. */
  async function registrationAt(caller: McpCaller, uriText: string): Promise<StoredMcpResource> {
    const text = formatMcpUri(parseUriOf(uriText, 'uri'));
    const [found] = await resources.findByUris(ownerOf(caller), [text]);
    if (!found) throw new DomainError('NOT_FOUND', `No MCP resource is registered at ${text}`);
    return found;
  }

  /** The registration at exactly `uriText`, as shown (the dashboard's edit form); 404 when there is none. */
  const get = async (caller: McpCaller, uriText: string): Promise<McpResourceView> => toMcpResourceView(await registrationAt(caller, uriText));

  /**
   * Changes the registration at `uriText` (its exact URI): the same rules as register, applied to the result.
   * Approvals already answered stay as they are (a token keeps opening what the registration still permits until
   * its expiresAt); an approver removed can no longer answer pending requests.
   */
  async function update(caller: McpCaller, uriText: string, change: McpResourceChange): Promise<McpResourceView> {
    const current = await registrationAt(caller, uriText);
    const problems: FieldProblem[] = [];
    const add = (...found: (FieldProblem | undefined)[]) => problems.push(...found.filter((p): p is FieldProblem => p !== undefined));
    if (change.name !== undefined) add(mcpNameProblem(change.name));
    if (change.description !== undefined) add(mcpDescriptionProblem(change.description));
    const permissions = change.permissions === undefined ? current.permissions : unique(change.permissions);
    add(...permissionsProblems(permissions));
    const approvers = change.approvers === undefined ? current.approvers : unique(change.approvers);
    add(...userIdsProblems(approvers, 'approvers', MCP_APPROVERS_MAX));
    const requiresApproval = change.requiresApproval ?? current.requiresApproval;
    if (requiresApproval && approvers.length === 0) {
      add({ field: 'approvers', reason: 'too_few', message: 'must name at least one user id while requiresApproval is true' });
    }
    const autoApprove = change.autoApprove === undefined ? current.autoApprove : autoApproveOf(change.autoApprove);
    add(...autoApproveProblems(autoApprove));
    if (change.value !== undefined) {
      add(current.type === 'custom' ? secretValueProblem(change.value)
        : { field: 'value', reason: 'not_allowed', message: 'is stored only with a svc://custom/ resource (the others read theirs)' });
    }
    if (problems.length > 0) throw validationError(problems);
    // Widening access to API key records needs the scope that reads them, as registering it does.
    if (current.type === 'api-key') requirePermission(caller, 'apikeys:manage');

    const changed: StoredMcpResource = {
      ...current, name: change.name?.trim() ?? current.name, description: change.description ?? current.description,
      permissions: permissions as McpOperation[], requiresApproval, approvers, autoApprove,
      sealedValue: change.value === undefined ? current.sealedValue : seal(deps.keyring(), mcpResourceValueContext(current.owner, current.id), change.value),
    };
    if (!(await resources.update(changed))) throw new DomainError('NOT_FOUND', `No MCP resource is registered at ${current.uri}`);
    return toMcpResourceView(changed);
  }

  /**
   * Deletes the registration at `uriText` (its exact URI) with its approvals: a token of one of them opens nothing
   * afterwards (a read is governed by whatever registration is left, and approvals are bound to a registration's id).
   */
  async function remove(caller: McpCaller, uriText: string): Promise<McpResourceView> {
    const current = await registrationAt(caller, uriText);
    if (current.type === 'api-key') requirePermission(caller, 'apikeys:manage');
    if (!(await resources.delete(current.owner, current.id))) throw new DomainError('NOT_FOUND', `No MCP resource is registered at ${current.uri}`);
    return toMcpResourceView(current);
  }

  /** URIs ascending (byte order); `cursor` continues after the previous page (null: from the first). */
  async function list(caller: McpCaller, q: { limit: number; cursor: string | null }):
    Promise<{ items: McpResourceView[]; total: number; nextCursor: string | null }> {
    const afterUri = q.cursor === null ? null : decodeCursor(q.cursor);
    // One more than asked tells whether another page follows.
    const { items, total } = await resources.list(ownerOf(caller), { limit: q.limit + 1, afterUri });
    const page = items.slice(0, q.limit);
    return { items: page.map(toMcpResourceView), total, nextCursor: items.length > q.limit ? encodeCursor(page.at(-1)!.uri) : null };
  }

  /**
   * Reads the value at `uriText` (not a wildcard) through its governing registration, once `grant` allows it (it
   * throws 403 otherwise and returns the approval that opened it, or null when none was needed). Refusals: 400 (not
   * a URI, or a wildcard), 404 (no registration governs it, or nothing is stored there), 403 (mcp-access.ts). The
   * answer's accessedAt and accessCount are the registration's after this read.
   */
  async function readThrough(caller: McpCaller, uriText: string,
    grant: (check: { owner: McpOwner; userId: string; registration: StoredMcpResource; uri: McpUri; operation: McpOperation; now: Date }) => Promise<string | null>,
  ): Promise<McpResourceRead> {
    const uri = parseUriOf(uriText, 'uri');
    if (isWildcard(uri)) throw validationError([{ field: 'uri', reason: 'invalid_value', message: 'names several values: read one URI under it' }]);
    const owner = ownerOf(caller);
    const text = formatMcpUri(uri);
    const registration = await governingResource(resources, owner, uri);
    if (!registration) throw new DomainError('NOT_FOUND', `No MCP resource governs ${text}`);
    const now = clock.now();
    const approvalId = await grant({ owner, userId: caller.userId, registration, uri, operation: 'read', now });
    const { value, metadata } = await valueAt(owner, caller.userId, uri, text, registration);
    const counted = await resources.recordAccess(owner, registration.id, now);
    return {
      uri: text, registration: toMcpResourceView(registration), value, metadata,
      accessedAt: counted?.accessedAt ?? now, accessCount: counted?.accessCount ?? registration.accessCount + 1, approvalId,
    };
  }

  /** A read presenting an access token (G11 `GET /mcp/resources/:uri`, `X-MCP-Access-Token`). */
  const read = (caller: McpCaller, uriText: string, accessToken: string | undefined): Promise<McpResourceRead> =>
    readThrough(caller, uriText, (check) => checkAccess(deps, { ...check, accessToken }));

  /**
   * A read by the requester through an approval of its own, without its token (requester-access.ts): `approval`
   * must open it exactly as its token would (null: the registration must need no approval).
   */
  const readAsRequester = (caller: McpCaller, uriText: string, approval: StoredMcpApproval | null): Promise<McpResourceRead> =>
    readThrough(caller, uriText, async (check) => checkApprovalAccess(approval, check));

  return { register, get, update, delete: remove, list, read, readAsRequester };
}
