import { Type } from 'typebox';
import { AUDIT_ACTION_FILTER_RULE, AUDIT_TEXT_MAX } from '../../core/audit/audit.rules.ts';
import { AUDIT_EXPORT_MAX_ROWS } from '../../core/audit/audit.service.ts';
import { AUDIT_CSV_COLUMNS } from './audit-mappers.ts';
import { Pagination, Region } from './schemas.ts';

/** G11 audit-log wire schemas: shapes and bounds here; the filter rules in core/audit/audit.rules.ts. */

const Cursor = Type.String({ minLength: 1, maxLength: 400, description: 'The cursor of the previous page' });

/** The filters a list and an export share; each is optional and they combine with AND. */
const FilterFields = {
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: AUDIT_TEXT_MAX.actor, description: 'A user id or a key id (key_…): rows of that actor' })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: `One action or a family: ${AUDIT_ACTION_FILTER_RULE}` })),
  resource: Type.Optional(Type.String({ minLength: 1, maxLength: AUDIT_TEXT_MAX.resource, description: 'Exactly this resource, e.g. secret:db-password' })),
  from: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'ISO 8601: rows at or after this instant' })),
  to: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'ISO 8601: rows before this instant' })),
  region: Type.Optional(Region('Rows of requests that named this X-Region')),
};

export const ListAuditLogsQuery = Type.Object({
  ...FilterFields,
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(Cursor),
});

export const AuditLogIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'aud_…' }) });

export const ExportAuditLogsBody = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'json (default) or csv' })),
  ...FilterFields,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_EXPORT_MAX_ROWS, description: `At most this many rows (default and maximum ${AUDIT_EXPORT_MAX_ROWS})` })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'X-Next-Cursor of the previous export' })),
});

const Nullable = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const AuditLogWire = Type.Object({
  id: Type.String({ description: 'aud_…' }),
  seq: Type.Integer({ description: 'Position in the chain of this tenant and mode: 1, 2, 3 …' }),
  tenantId: Type.String(),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  timestamp: Type.String({ format: 'date-time' }),
  actor: Type.Object({ userId: Type.String(), keyId: Nullable('The API key used (its id, never the key)') }),
  action: Type.String({ description: 'secret.create, secret.read, secret.update, secret.delete, secret.list, apikey.*, mcp.*, audit.read, audit.export' }),
  resource: Type.String({ description: 'secret:<name>, secret:* (a list), api-key:<id>, mcp:<uri>, mcp-approval:<id>, audit-log:<id>, audit-log:* …' }),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  status: Type.Integer({ description: 'The HTTP status the request was answered with' }),
  ip: Nullable('The caller address the server saw'),
  userAgent: Nullable('User-Agent, at most 256 characters'),
  region: Nullable('X-Region, when the request named a valid one'),
  requestId: Nullable('X-Request-Id of the answer'),
  metadata: Type.Record(Type.String(), Type.Union([Type.String(), Type.Integer(), Type.Boolean(), Type.Null()]), {
    description: 'A little context (a version read, rows returned); never a value or a key',
  }),
  prevHash: Type.String({ description: 'The hash of the row before it in the chain (64 zeros for seq 1)' }),
  hash: Type.String({ description: 'SHA-256 (hex) of this row\'s canonical form: see docs/api.md, "Audit logs"' }),
});

export const AuditResponses = {
  log: AuditLogWire,
  list: Type.Object({ data: Type.Array(AuditLogWire), pagination: Pagination }),
  export: {
    description: 'The rows in chain order (oldest first): a JSON array of audit log entries, or CSV with the header line '
      + `${AUDIT_CSV_COLUMNS.join(',')}. X-Next-Cursor, when present, continues the export.`,
    content: {
      'application/json': { schema: Type.Array(AuditLogWire) },
      'text/csv': { schema: Type.String() },
    },
  },
};
