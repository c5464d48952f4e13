import type { KeyMode } from '../scope.ts';
import type { SealedValue } from '../secrets/secret.types.ts';

/**
 * Whose MCP resources and approvals: a tenant and a key mode, as for secrets (a `mnemo_test_` key registers, reads
 * and approves in its own sandbox). Another owner's resource or approval answers exactly like a missing one.
 */
export interface McpOwner {
  tenantId: string;
  mode: KeyMode;
}

/** What an MCP client may do with a resource; an approval asks for one of them. */
export const MCP_OPERATIONS = ['read', 'write'] as const;
export type McpOperation = (typeof MCP_OPERATIONS)[number];

/** What stands behind a resource's URI: a G11 secret, an API key record, or a value stored with the resource. */
export const MCP_RESOURCE_TYPES = ['secret', 'api-key', 'custom'] as const;
export type McpResourceType = (typeof MCP_RESOURCE_TYPES)[number];

/** When a request for approval is granted without a person: every condition given must hold. */
export interface AutoApprove {
  enabled: boolean;
  conditions: {
    /** `HH:MM-HH:MM <IANA zone>` (core/mcp-access/time-window.ts): the request's time, in that zone, falls inside. */
    timeWindow?: string;
    /** The requester's user id is one of these. */
    requester?: string[];
  };
}

/**
 * A registered MCP resource: the access path to what its URI names (a wildcard URI governs every URI under it).
 * Reads go through the most specific registration of a URI (core/mcp-access/mcp-uri.ts, governingCandidates).
 */
export interface StoredMcpResource {
  /** `mcr_…`. */
  id: string;
  owner: McpOwner;
  /** One of the spec's patterns (mcp-uri.ts); unique per owner. */
  uri: string;
  type: McpResourceType;
  name: string;
  description: string;
  permissions: McpOperation[];
  requiresApproval: boolean;
  /** User ids who may answer its approval requests. */
  approvers: string[];
  autoApprove: AutoApprove;
  /** A `custom` resource's value, sealed with the master key (mcpResourceValueContext); null for the other types. */
  sealedValue: SealedValue | null;
  createdAt: Date;
  createdBy: string;
  /** The last successful read through this registration, and how many there were. */
  accessedAt: Date | null;
  accessCount: number;
}

/**
 * `pending` until answered or past its expiresAt (then it reads `expired`); `approved` and `denied` are answers. An
 * approved approval keeps its status after expiresAt: its token simply stops opening anything.
 */
export const MCP_APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired'] as const;
export type McpApprovalStatus = (typeof MCP_APPROVAL_STATUSES)[number];

/** A request for access, as stored. */
export interface StoredMcpApproval {
  /** `appr_…`. */
  id: string;
  owner: McpOwner;
  /** The registration that governed `resource` when it was asked for: only its approvers answer, only its reads open. */
  resourceId: string;
  /** The URI asked for (a wildcard asks for every URI under it that the same registration governs). */
  resource: string;
  operation: McpOperation;
  reason: string;
  requestedBy: string;
  requestedAt: Date;
  /** requestedAt + ttl: the request must be answered before it, and an approval's token opens nothing after it. */
  expiresAt: Date;
  /** As stored: a `pending` row past its expiresAt is shown as `expired` (effectiveStatus) before anything writes it. */
  status: McpApprovalStatus;
  respondedBy: string | null;
  respondedAt: Date | null;
  responseReason: string | null;
  /** Granted by the resource's autoApprove conditions, without a person (respondedBy is AUTO_APPROVER). */
  autoApproved: boolean;
  /** SHA-256 (hex) of the access token an approval issued; the token itself is never stored. */
  tokenDigest: string | null;
}

/** The answer a person (or the auto-approval) gives to a pending approval. */
export interface McpApprovalAnswer {
  status: 'approved' | 'denied';
  respondedBy: string;
  respondedAt: Date;
  responseReason: string | null;
  /** Set when approved. */
  tokenDigest: string | null;
}

/** `respondedBy` of an approval granted by the resource's autoApprove conditions. */
export const AUTO_APPROVER = 'auto-approve';

/** The status an approval has at `now`: a pending request past its expiresAt can no longer be answered. */
export const effectiveStatus = (a: Pick<StoredMcpApproval, 'status' | 'expiresAt'>, now: Date): McpApprovalStatus =>
  (a.status === 'pending' && a.expiresAt.getTime() <= now.getTime() ? 'expired' : a.status);

/** The AAD parts a custom resource's value is sealed with: tenant, mode and the resource's id. */
export const mcpResourceValueContext = (owner: McpOwner, resourceId: string): string[] =>
  ['mcp-resource', owner.tenantId, owner.mode, resourceId];
