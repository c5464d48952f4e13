import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireScope } from '../../core/api-keys/api-key.service.ts';
import type { Scope as KeyScope } from '../../core/api-keys/api-key.types.ts';
import type { Clock } from '../../core/clock.ts';
import { validationError } from '../../core/errors.ts';
import type { AuditService } from '../../core/audit/audit.service.ts';
import type { IdempotentRequestService } from '../../core/idempotency/idempotent-request.service.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import { parseExpiresIn, secretNameProblem } from '../../core/secrets/secret.rules.ts';
import type { SecretActor, SecretService } from '../../core/secrets/secret.service.ts';
import type { SecretOwner } from '../../core/secrets/secret.types.ts';
import { authGuard, requirePrincipal, setRateLimitHeaders, type AuthDeps } from '../http-kit/auth.ts';
import { apiKeyRoutes, G11_API_KEY_SCOPES, type ApiKeyRouteDeps } from './api-keys.routes.ts';
import { auditRecorder, noteForAudit, requireAuditedRoutes, type AuditedRoute } from './audit-recorder.ts';
import { auditLogRoutes } from './audit-routes.ts';
import { idempotencyHooks } from './idempotency.ts';
import { G11_MCP_AUDIT_ACTIONS, G11_MCP_SCOPES, mcpRoutes, type McpRouteDeps } from './mcp.routes.ts';
import { createG11ErrorHandler, G11_INTERNAL_ERROR, G11ErrorWire, g11ErrorBody } from './errors.ts';
import { toSecretSummaryWire, toSecretWire } from './mappers.ts';
import { G11_WEBHOOK_SCOPES, webhookRoutes, type WebhookRouteDeps } from './webhooks.routes.ts';
import { CreateSecretBody, GetSecretQuery, ListSecretsQuery, NameParams, RegionHeaders, Responses, UpdateSecretBody } from './schemas.ts';

export interface G11Deps extends AuthDeps, ApiKeyRouteDeps, WebhookRouteDeps, McpRouteDeps {
  secrets: SecretService;
  audit: AuditService;
  idempotentRequests: Pick<IdempotentRequestService, 'begin' | 'finish' | 'abandon'>;
  limits: Pick<LimitsService, 'gateway' | 'security'>;
  clock: Clock;
}

const errors = { 400: G11ErrorWire, 401: G11ErrorWire, 403: G11ErrorWire, 404: G11ErrorWire, 429: G11ErrorWire };
const writeErrors = { ...errors, 409: G11ErrorWire, 413: G11ErrorWire, 415: G11ErrorWire };

/**
 * Which scope each G11 endpoint needs (docs/api.md shows this table). The spec names the scopes but not the mapping:
 * for secrets, reads need `secrets:read`, creating and changing `secrets:write`, deleting `secrets:delete`; every
 * API-key endpoint needs `apikeys:manage`; the audit log `audit:read`; webhooks `secrets:read` to read them and
 * `secrets:write` to manage them (plus, per event subscribed, G11_EVENT_SCOPES).
 */
export const G11_SCOPES = {
  'POST /v1/security/secrets': 'secrets:write',
  'GET /v1/security/secrets': 'secrets:read',
  'GET /v1/security/secrets/:name': 'secrets:read',
  'PUT /v1/security/secrets/:name': 'secrets:write',
  'DELETE /v1/security/secrets/:name': 'secrets:delete',
  ...G11_API_KEY_SCOPES,
  'GET /v1/security/audit-logs': 'audit:read',
  'GET /v1/security/audit-logs/:id': 'audit:read',
  'POST /v1/security/audit-logs/export': 'audit:read',
  ...G11_WEBHOOK_SCOPES,
  ...G11_MCP_SCOPES,
} as const satisfies Record<string, KeyScope>;

/** A request's path parameter or body field, when it is text. */
const textOf = (source: unknown, field: string): string | undefined => {
  const v = source !== null && typeof source === 'object' ? (source as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' ? v : undefined;
};
/** `secret:<name>`, or `secret` when the request named no valid secret (an invalid name is not recorded). */
const secretResource = (name: string | undefined): string =>
  (name !== undefined && secretNameProblem(name) === undefined ? `secret:${name}` : 'secret');
/** `api-key:<id>` (the record's id, never the key), or `api-key` when the id is not one. */
const apiKeyResource = (id: string | undefined): string => (id !== undefined && /^key_[A-Za-z0-9]{1,60}$/.test(id) ? `api-key:${id}` : 'api-key');
const auditLogResource = (id: string | undefined): string => (id !== undefined && /^aud_[A-Za-z0-9]{1,60}$/.test(id) ? `audit-log:${id}` : 'audit-log');
const webhookResource = (id: string | undefined): string => (id !== undefined && /^whk_[A-Za-z0-9]{1,60}$/.test(id) ? `webhook:${id}` : 'webhook');

/**
 * What each G11 endpoint records in the caller's audit log (audit-recorder.ts): every key of G11_SCOPES must have
 * an entry (it does not compile otherwise), and a route registered without one stops the server at start. New
 * endpoints (API keys, approvals, MCP) add their action to core/audit/audit.rules.ts and a line here.
 */
export const G11_AUDIT_ACTIONS = {
  'POST /v1/security/secrets': { action: 'secret.create', resource: (req) => secretResource(textOf(req.body, 'name')) },
  'GET /v1/security/secrets': { action: 'secret.list', resource: () => 'secret:*' },
  'GET /v1/security/secrets/:name': { action: 'secret.read', resource: (req) => secretResource(textOf(req.params, 'name')) },
  'PUT /v1/security/secrets/:name': { action: 'secret.update', resource: (req) => secretResource(textOf(req.params, 'name')) },
  'DELETE /v1/security/secrets/:name': { action: 'secret.delete', resource: (req) => secretResource(textOf(req.params, 'name')) },
  'GET /v1/security/audit-logs': { action: 'audit.read', resource: () => 'audit-log:*' },
  'GET /v1/security/audit-logs/:id': { action: 'audit.read', resource: (req) => auditLogResource(textOf(req.params, 'id')) },
  'POST /v1/security/audit-logs/export': { action: 'audit.export', resource: () => 'audit-log:*' },
  'POST /v1/security/api-keys': { action: 'apikey.create', resource: () => 'api-key' },
  'GET /v1/security/api-keys': { action: 'apikey.list', resource: () => 'api-key:*' },
  'GET /v1/security/api-keys/:id': { action: 'apikey.read', resource: (req) => apiKeyResource(textOf(req.params, 'id')) },
  'PUT /v1/security/api-keys/:id': { action: 'apikey.update', resource: (req) => apiKeyResource(textOf(req.params, 'id')) },
  'DELETE /v1/security/api-keys/:id': { action: 'apikey.revoke', resource: (req) => apiKeyResource(textOf(req.params, 'id')) },
  'POST /v1/security/api-keys/:id/rotate': { action: 'apikey.rotate', resource: (req) => apiKeyResource(textOf(req.params, 'id')) },
  'POST /v1/security/webhooks': { action: 'webhook.create', resource: () => 'webhook' },
  'GET /v1/security/webhooks': { action: 'webhook.list', resource: () => 'webhook:*' },
  'GET /v1/security/webhooks/:id': { action: 'webhook.read', resource: (req) => webhookResource(textOf(req.params, 'id')) },
  'PUT /v1/security/webhooks/:id': { action: 'webhook.update', resource: (req) => webhookResource(textOf(req.params, 'id')) },
  'DELETE /v1/security/webhooks/:id': { action: 'webhook.delete', resource: (req) => webhookResource(textOf(req.params, 'id')) },
  ...G11_MCP_AUDIT_ACTIONS,
} as const satisfies Record<keyof typeof G11_SCOPES, AuditedRoute>;

/** Secrets belong to the key's tenant and mode: a `mnemo_test_` key works on its own sandbox set. */
function ownerOf(req: FastifyRequest): SecretOwner {
  const p = requirePrincipal(req);
  return { tenantId: p.tenantId, mode: p.mode };
}

function actorOf(req: FastifyRequest & { headers: { 'x-region'?: string } }): SecretActor {
  return { userId: requirePrincipal(req).userId, region: req.headers['x-region'] ?? null };
}

function expiresInMs(value: string | null | undefined): number | null | undefined {
  if (value === undefined || value === null) return value;
  const parsed = parseExpiresIn(value);
  if ('problem' in parsed) throw validationError([parsed.problem]);
  return parsed.ms;
}

/**
 * G11, the secrets component (`/v1/security`), `Authorization: Bearer`. Every answer to an authenticated request
 * carries the G11 hourly limit in X-RateLimit-Limit / -Remaining / -Reset (Unix seconds); 429 adds Retry-After.
 */
export const g11Routes: FastifyPluginAsync<G11Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG11ErrorHandler(deps.clock));
  // Before any route: every G11 route must have its audit action, and every answer is recorded before it leaves.
  r.addHook('onRoute', requireAuditedRoutes(G11_AUDIT_ACTIONS));
  // Idempotency-Key on every POST and PUT (idempotency.ts); its onSend goes before the audit recorder's.
  const idempotency = idempotencyHooks(deps.idempotentRequests, G11_SCOPES);
  r.addHook('onRoute', idempotency.requireScopes);
  r.addHook('onSend', idempotency.onSend);
  const withheld = { status: G11_INTERNAL_ERROR.status, body: g11ErrorBody(G11_INTERNAL_ERROR) };
  r.addHook('onSend', auditRecorder(deps.audit, G11_AUDIT_ACTIONS, withheld));
  r.addHook('onRequest', authGuard(deps, 'bearer'));
  r.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const decision = await deps.limits.security(requirePrincipal(req));
    if (decision) setRateLimitHeaders(reply, decision);
  });
  r.addHook('preHandler', idempotency.preHandler);
  const tags = ['G11 secrets'];
  const security = [{ bearer: [] }];
  const scope = (req: FastifyRequest, route: keyof typeof G11_SCOPES) => requireScope(requirePrincipal(req), G11_SCOPES[route]);

  r.post('/v1/security/secrets', {
    schema: {
      tags, security, summary: 'Create a secret (version 1); its value is encrypted at rest',
      headers: RegionHeaders, body: CreateSecretBody, response: { 201: Responses.secret, ...writeErrors },
    },
  }, async (req, reply) => {
    scope(req, 'POST /v1/security/secrets');
    const b = req.body;
    const secret = await deps.secrets.create(ownerOf(req), actorOf(req), {
      name: b.name, value: b.value, tags: b.tags ?? [], expiresInMs: expiresInMs(b.expiresIn) ?? null,
    });
    noteForAudit(req, { version: secret.version });
    return reply.status(201).send(toSecretWire(secret));
  });

  r.get('/v1/security/secrets', {
    schema: { tags, security, summary: 'List secrets (names ascending, no values), by tags and region', querystring: ListSecretsQuery, response: { 200: Responses.list, ...errors } },
  }, async (req) => {
    scope(req, 'GET /v1/security/secrets');
    const q = req.query;
    const wanted = (q.tags ?? '').split(',').map((t) => t.trim()).filter((t) => t.length > 0);
    const page = await deps.secrets.list(ownerOf(req), { tags: wanted, region: q.region ?? null, limit: q.limit, cursor: q.cursor ?? null });
    noteForAudit(req, { returned: page.items.length });
    return {
      data: page.items.map(toSecretSummaryWire),
      pagination: { cursor: page.nextCursor, hasMore: page.nextCursor !== null, totalCount: page.total },
    };
  });

  r.get('/v1/security/secrets/:name', {
    schema: {
      tags, security, summary: 'Read a secret: its newest version, or ?version=N of the last 10',
      params: NameParams, querystring: GetSecretQuery, response: { 200: Responses.secret, ...errors },
    },
  }, async (req) => {
    scope(req, 'GET /v1/security/secrets/:name');
    const secret = await deps.secrets.get(ownerOf(req), { userId: requirePrincipal(req).userId, via: 'api' }, req.params.name, req.query.version);
    noteForAudit(req, { version: secret.version });
    return toSecretWire(secret);
  });

  r.put('/v1/security/secrets/:name', {
    schema: {
      tags, security, summary: 'Write a new version of a secret',
      headers: RegionHeaders, params: NameParams, body: UpdateSecretBody, response: { 200: Responses.secret, ...writeErrors },
    },
  }, async (req) => {
    scope(req, 'PUT /v1/security/secrets/:name');
    const b = req.body;
    const secret = await deps.secrets.update(ownerOf(req), actorOf(req), req.params.name, {
      value: b.value, ...(b.tags !== undefined ? { tags: b.tags } : {}), ...(b.expiresIn !== undefined ? { expiresInMs: expiresInMs(b.expiresIn) } : {}),
    });
    noteForAudit(req, { version: secret.version });
    return toSecretWire(secret);
  });

  r.delete('/v1/security/secrets/:name', {
    schema: { tags, security, summary: 'Delete a secret and every version of it', params: NameParams, response: { 204: Responses.deleted, ...errors } },
  }, async (req, reply) => {
    scope(req, 'DELETE /v1/security/secrets/:name');
    await deps.secrets.delete(ownerOf(req), req.params.name);
    return reply.status(204).send(null);
  });

  await r.register(auditLogRoutes, { audit: deps.audit, scope });
  // After the hooks above, so that they apply to these routes too.
  await app.register(apiKeyRoutes, { apiKeyManagement: deps.apiKeyManagement });
  await app.register(webhookRoutes, { webhooks: deps.webhooks });
  await app.register(mcpRoutes, { mcpResources: deps.mcpResources, mcpApprovals: deps.mcpApprovals, audit: deps.audit });
};
