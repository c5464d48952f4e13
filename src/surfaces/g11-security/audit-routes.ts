import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AUDIT_EXPORT_MAX_ROWS, type AuditService } from '../../core/audit/audit.service.ts';
import type { AuditOwner } from '../../core/audit/audit.types.ts';
import { requirePrincipal } from '../http-kit/auth.ts';
import { noteForAudit } from './audit-recorder.ts';
import { toAuditCsv, toAuditLogWire } from './audit-mappers.ts';
import { AuditLogIdParams, AuditResponses, ExportAuditLogsBody, ListAuditLogsQuery } from './audit-schemas.ts';
import { G11ErrorWire } from './errors.ts';

export interface AuditRouteDeps {
  audit: AuditService;
}

/** `audit-log:<id>`, or `audit-log` when the id is not one. */
const auditLogResource = (req: FastifyRequest): string => {
  const id = (req.params as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' && /^aud_[A-Za-z0-9]{1,60}$/.test(id) ? `audit-log:${id}` : 'audit-log';
};

const errors = { 400: G11ErrorWire, 401: G11ErrorWire, 403: G11ErrorWire, 404: G11ErrorWire, 429: G11ErrorWire };

/** The caller's audit log: the key's tenant and mode (a sandbox key reads the sandbox's log). */
function ownerOf(req: FastifyRequest): AuditOwner {
  const p = requirePrincipal(req);
  return { tenantId: p.tenantId, mode: p.mode };
}

/**
 * The audit-log endpoints of G11, registered inside g11Routes (its auth, limits, error envelope and recorder apply:
 * reading the log is itself recorded, as `audit.read` and `audit.export`).
 */
export const auditLogRoutes: FastifyPluginAsync<AuditRouteDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['G11 audit logs'];
  const security = [{ bearer: [] }];

  r.get('/v1/security/audit-logs', {
    config: { operation: 'audit.list', auditResource: () => 'audit-log:*' },
    schema: {
      tags, security, summary: 'List audit log entries, newest first, filtered by actor, action, resource, region and time',
      querystring: ListAuditLogsQuery, response: { 200: AuditResponses.list, ...errors },
    },
  }, async (req) => {
    const { limit, cursor, ...filter } = req.query;
    const page = await deps.audit.list(ownerOf(req), filter, { limit, cursor: cursor ?? null });
    noteForAudit(req, { returned: page.items.length });
    return {
      data: page.items.map(toAuditLogWire),
      pagination: { cursor: page.nextCursor, hasMore: page.nextCursor !== null, totalCount: page.total },
    };
  });

  r.get('/v1/security/audit-logs/:id', {
    config: { operation: 'audit.read', auditResource: auditLogResource },
    schema: { tags, security, summary: 'Read one audit log entry', params: AuditLogIdParams, response: { 200: AuditResponses.log, ...errors } },
  }, async (req) => {
    return toAuditLogWire(await deps.audit.get(ownerOf(req), req.params.id));
  });

  r.post('/v1/security/audit-logs/export', {
    config: { operation: 'audit.export', auditResource: () => 'audit-log:*' },
    schema: {
      tags, security, summary: 'Export audit log entries in chain order, as JSON or CSV',
      body: ExportAuditLogsBody,
      response: { 200: AuditResponses.export, ...errors, 413: G11ErrorWire, 415: G11ErrorWire },
    },
  }, async (req, reply) => {
    const { format = 'json', limit = AUDIT_EXPORT_MAX_ROWS, cursor, ...filter } = req.body;
    const { rows, total, nextCursor } = await deps.audit.export(ownerOf(req), filter, { limit, cursor: cursor ?? null });
    noteForAudit(req, { format, rows: rows.length });
    reply.header('X-Total-Count', total);
    if (nextCursor !== null) reply.header('X-Next-Cursor', nextCursor);
    reply.header('Content-Disposition', `attachment; filename="audit-logs.${format}"`);
    if (format === 'csv') return reply.type('text/csv; charset=utf-8').send(toAuditCsv(rows));
    return reply.type('application/json; charset=utf-8').send(rows.map(toAuditLogWire));
  });
};
