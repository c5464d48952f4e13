import { Type } from 'typebox';
import { MCP_URI_MAX, MCP_URI_RULE } from '../../core/mcp-access/mcp-uri.ts';
import {
  MCP_APPROVERS_MAX, MCP_DESCRIPTION_MAX, MCP_NAME_MAX, MCP_REASON_MAX, MCP_REQUESTERS_MAX, MCP_TTL_DEFAULT_SECONDS,
  MCP_TTL_MAX_SECONDS, MCP_TTL_MIN_SECONDS, USER_ID_MAX,
} from '../../core/mcp-access/mcp.rules.ts';
import { MCP_APPROVAL_STATUSES, MCP_OPERATIONS, MCP_RESOURCE_TYPES } from '../../core/mcp-access/mcp.types.ts';
import { TIME_WINDOW_RULE } from '../../core/mcp-access/time-window.ts';
import { SECRET_VALUE_MAX_BYTES } from '../../core/secrets/secret.rules.ts';
import { Pagination } from './schemas.ts';

/** G11 MCP wire schemas (`/v1/security/mcp/…`): shapes and bounds here; the rules in core/mcp-access/mcp.rules.ts and mcp-uri.ts. */

const Uri = Type.String({ minLength: 1, maxLength: MCP_URI_MAX, description: `An MCP resource URI, one of: ${MCP_URI_RULE}` });
const UserId = Type.String({ minLength: 1, maxLength: USER_ID_MAX, description: 'A user id, as API keys carry it' });
const Operation = Type.Enum([...MCP_OPERATIONS]);
const Time = Type.String({ format: 'date-time' });
const Cursor = Type.String({ minLength: 1, maxLength: 400, description: 'pagination.cursor of the previous page' });

const AutoApproveWire = Type.Object({
  enabled: Type.Boolean(),
  conditions: Type.Object({
    timeWindow: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: TIME_WINDOW_RULE })),
    requester: Type.Optional(Type.Array(UserId, { minItems: 1, maxItems: MCP_REQUESTERS_MAX, description: 'Only requests of these users' })),
  }, { additionalProperties: false, description: 'Every condition given must hold; none: every request is approved' }),
}, { additionalProperties: false });

export const CreateMcpResourceBody = Type.Object({
  uri: Uri,
  name: Type.String({ minLength: 1, maxLength: MCP_NAME_MAX }),
  description: Type.Optional(Type.String({ maxLength: MCP_DESCRIPTION_MAX })),
  type: Type.Optional(Type.Enum([...MCP_RESOURCE_TYPES], { description: 'Follows from the URI; when given it must match' })),
  permissions: Type.Optional(Type.Array(Operation, { minItems: 1, maxItems: MCP_OPERATIONS.length * 2, description: 'Default ["read"]' })),
  requiresApproval: Type.Optional(Type.Boolean({ description: 'Default true (then approvers must name someone)' })),
  approvers: Type.Optional(Type.Array(UserId, { maxItems: MCP_APPROVERS_MAX, description: 'The users who answer its approval requests' })),
  autoApprove: Type.Optional(Type.Object({
    enabled: Type.Boolean(),
    conditions: Type.Optional(AutoApproveWire.properties.conditions),
  }, { additionalProperties: false, description: 'Approve requests at once when every condition given holds (default disabled)' })),
  value: Type.Optional(Type.String({
    minLength: 1, maxLength: SECRET_VALUE_MAX_BYTES, description: 'The value of a svc://custom/ resource (required there, refused elsewhere); encrypted at rest',
  })),
}, { additionalProperties: false });

export const UpdateMcpResourceBody = Type.Object({
  name: Type.Optional(CreateMcpResourceBody.properties.name),
  description: Type.Optional(Type.String({ maxLength: MCP_DESCRIPTION_MAX })),
  permissions: CreateMcpResourceBody.properties.permissions,
  requiresApproval: Type.Optional(Type.Boolean({ description: 'While true, approvers must name someone' })),
  approvers: Type.Optional(Type.Array(UserId, { maxItems: MCP_APPROVERS_MAX, description: 'Replaces the users who answer its approval requests' })),
  autoApprove: Type.Optional(Type.Object({
    enabled: Type.Boolean(),
    conditions: Type.Optional(AutoApproveWire.properties.conditions),
  }, { additionalProperties: false, description: 'Replaces the auto-approve settings as a whole' })),
  value: Type.Optional(Type.String({
    minLength: 1, maxLength: SECRET_VALUE_MAX_BYTES, description: 'A new value of a svc://custom/ resource (refused elsewhere); encrypted at rest',
  })),
}, { additionalProperties: false, description: 'The fields given replace the stored ones; the URI and type stay' });

export const McpResourceUriParams = Type.Object({ uri: Uri });
export const McpAccessHeaders = Type.Object({
  'x-mcp-access-token': Type.Optional(Type.String({
    maxLength: 200, description: 'The accessToken of an approval, for a resource that requires approval',
  })),
});

export const ListMcpResourcesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
  cursor: Type.Optional(Cursor),
});

export const RequestMcpApprovalBody = Type.Object({
  resource: Uri,
  operation: Type.Optional(Type.Enum([...MCP_OPERATIONS], { description: 'Default read; one the resource permits' })),
  reason: Type.String({ minLength: 1, maxLength: MCP_REASON_MAX, description: 'Why: the approvers read it' }),
  requestedBy: Type.Optional(Type.String({ minLength: 1, maxLength: USER_ID_MAX, description: 'The calling key\'s user (the default); anyone else is 403' })),
  ttl: Type.Optional(Type.Integer({
    minimum: MCP_TTL_MIN_SECONDS, maximum: MCP_TTL_MAX_SECONDS,
    description: `Seconds until the approval expires, answered or not (default ${MCP_TTL_DEFAULT_SECONDS})`,
  })),
}, { additionalProperties: false });

export const RespondMcpApprovalBody = Type.Object({
  action: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
  reason: Type.Optional(Type.String({ minLength: 1, maxLength: MCP_REASON_MAX })),
  approvedBy: Type.Optional(Type.String({ minLength: 1, maxLength: USER_ID_MAX, description: 'The calling key\'s user (the default); anyone else is 403' })),
}, { additionalProperties: false });

export const McpApprovalIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'appr_…' }) });

export const ListMcpApprovalsQuery = Type.Object({
  status: Type.Optional(Type.Enum([...MCP_APPROVAL_STATUSES], { description: 'The status as it reads now' })),
  resource: Type.Optional(Uri),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(Cursor),
});

export const McpAuditQuery = Type.Object({
  resource: Type.Optional(Uri),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: USER_ID_MAX, description: 'A user id or a key id (key_…)' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(Cursor),
});

const McpResourceWire = Type.Object({
  id: Type.String({ description: 'mcr_…' }),
  uri: Type.String(),
  name: Type.String(),
  description: Type.String(),
  type: Type.Enum([...MCP_RESOURCE_TYPES]),
  permissions: Type.Array(Operation),
  requiresApproval: Type.Boolean(),
  approvers: Type.Array(Type.String()),
  autoApprove: AutoApproveWire,
  createdAt: Time,
  createdBy: Type.String(),
});

const McpResourceReadWire = Type.Object({
  ...McpResourceWire.properties,
  id: Type.String({ description: 'The governing registration (mcr_…)' }),
  uri: Type.String({ description: 'The URI read' }),
  value: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'What the value is: type, registeredUri, and per type more' }),
  accessedAt: Time,
  accessCount: Type.Integer({ description: 'Successful reads through the governing registration, this one included' }),
});

const Nullable = (schema: ReturnType<typeof Type.String>) => Type.Union([schema, Type.Null()]);
const McpApprovalWire = Type.Object({
  approvalId: Type.String({ description: 'appr_…' }),
  status: Type.Enum([...MCP_APPROVAL_STATUSES]),
  resource: Type.String(),
  operation: Operation,
  reason: Type.String(),
  requestedBy: Type.String(),
  requestedAt: Time,
  expiresAt: Time,
  approvalUrl: Type.String({ description: 'MNEMO_DASHBOARD_URL/approvals/<approvalId>' }),
  approvedBy: Nullable(Type.String()),
  approvedAt: Nullable(Time),
  deniedBy: Nullable(Type.String()),
  deniedAt: Nullable(Time),
  responseReason: Nullable(Type.String()),
  autoApproved: Type.Boolean(),
});
const IssuedMcpApprovalWire = Type.Object({
  ...McpApprovalWire.properties,
  accessToken: Nullable(Type.String({ description: 'mcp_at_…: shown in this answer only, when approved; send it as X-MCP-Access-Token' })),
});

const McpAuditEntryWire = Type.Object({
  id: Type.String({ description: 'aud_… (the row of the G11 audit log)' }),
  timestamp: Time,
  resource: Type.String({ description: 'The URI (or svc-less name) acted on' }),
  operation: Type.String({ description: 'read, register, update, delete, list, request, respond, approval_list, approval_read' }),
  actor: Type.String({ description: 'The user id of the key used' }),
  approvalId: Nullable(Type.String()),
  success: Type.Boolean(),
  status: Type.Integer({ description: 'The HTTP status answered' }),
  metadata: Type.Object({
    ipAddress: Nullable(Type.String()),
    userAgent: Nullable(Type.String()),
    reason: Type.Optional(Type.String({ description: 'Why a request was refused (details.reason of its 403), when it was' })),
  }),
});

export const McpResponses = {
  resource: McpResourceWire,
  read: McpResourceReadWire,
  deleted: Type.Null({ description: 'Deleted, with its approvals' }),
  resources: Type.Object({ resources: Type.Array(McpResourceWire), pagination: Pagination }),
  approval: McpApprovalWire,
  issued: IssuedMcpApprovalWire,
  approvals: Type.Object({ data: Type.Array(McpApprovalWire), pagination: Pagination }),
  audit: Type.Object({ logs: Type.Array(McpAuditEntryWire), pagination: Pagination }),
};
