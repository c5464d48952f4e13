import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import { validationError } from '../../core/errors.ts';
import type { AuditService } from '../../core/audit/audit.service.ts';
import type { OperationRunner } from '../../core/operations/runner.ts';
import type { IdempotentRequestService } from '../../core/idempotency/idempotent-request.service.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import { parseExpiresIn, secretNameProblem } from '../../core/secrets/secret.rules.ts';
import type { SecretActor, SecretService } from '../../core/secrets/secret.service.ts';
import type { SecretOwner } from '../../core/secrets/secret.types.ts';
import { authGuard, requirePrincipal, setRateLimitHeaders, type AuthDeps } from '../http-kit/auth.ts';
import { apiKeyRoutes, type ApiKeyRouteDeps } from './api-keys.routes.ts';
import { auditRecorder, noteForAudit, requireAuditedRoutes } from './audit-recorder.ts';
import { auditLogRoutes } from './audit-routes.ts';
import { idempotencyHooks } from './idempotency.ts';
import { mcpRegistrationRoutes } from './mcp-registration.routes.ts';
import { mcpRoutes, type McpRouteDeps } from './mcp.routes.ts';
import { createG11ErrorHandler, G11_INTERNAL_ERROR, G11ErrorWire, g11ErrorBody } from './errors.ts';
import { toSecretSummaryWire, toSecretWire } from './mappers.ts';
import { webhookRoutes, type WebhookRouteDeps } from './webhooks.routes.ts';
import { CreateSecretBody, GetSecretQuery, ListSecretsQuery, NameParams, RegionHeaders, Responses, UpdateSecretBody } from './schemas.ts';

export interface G11Deps extends AuthDeps, ApiKeyRouteDeps, WebhookRouteDeps, McpRouteDeps {
  secrets: SecretService;
  audit: AuditService;
  /** Writes each request's audit row (the operation's action, core/operations). */
  operations: Pick<OperationRunner, 'record'>;
  idempotentRequests: Pick<IdempotentRequestService, 'begin' | 'finish' | 'abandon'>;
  limits: Pick<LimitsService, 'gateway' | 'security'>;
  clock: Clock;
}

const errors = { 400: G11ErrorWire, 401: G11ErrorWire, 403: G11ErrorWire, 404: G11ErrorWire, 429: G11ErrorWire };
const writeErrors = { ...errors, 409: G11ErrorWire, 413: G11ErrorWire, 415: G11ErrorWire };

/** `secret:<name>`, or `secret` when the request named no valid secret (an invalid name is not recorded). */
const secretResource = (name: unknown): string =>
  (typeof name === 'string' && secretNameProblem(name) === undefined ? `secret:${name}` : 'secret');
const bodyName = (req: FastifyRequest): string => secretResource((req.body as { name?: unknown } | null | undefined)?.name);
const pathName = (req: FastifyRequest): string => secretResource((req.params as { name?: unknown } | undefined)?.name);

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
  r.addHook('onRoute', requireAuditedRoutes);
  // Idempotency-Key on every POST and PUT (idempotency.ts); its onSend goes before the audit recorder's.
  const idempotency = idempotencyHooks(deps.idempotentRequests);
  r.addHook('onRoute', idempotency.requireIdempotentOperations);
  r.addHook('onSend', idempotency.onSend);
  const withheld = { status: G11_INTERNAL_ERROR.status, body: g11ErrorBody(G11_INTERNAL_ERROR) };
  r.addHook('onSend', auditRecorder(deps.operations, withheld));
  r.addHook('onRequest', authGuard(deps, 'bearer'));
  r.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const decision = await deps.limits.security(requirePrincipal(req));
    if (decision) setRateLimitHeaders(reply, decision);
  });
  r.addHook('preHandler', idempotency.preHandler);
  const tags = ['G11 secrets'];
  const security = [{ bearer: [] }];

  r.post('/v1/security/secrets', {
    config: { operation: 'secret.create', auditResource: bodyName },
    schema: {
      tags, security, summary: 'Create a secret (version 1); its value is encrypted at rest',
      headers: RegionHeaders, body: CreateSecretBody, response: { 201: Responses.secret, ...writeErrors },
    },
  }, async (req, reply) => {
    const b = req.body;
    const secret = await deps.secrets.create(ownerOf(req), actorOf(req), {
      name: b.name, value: b.value, tags: b.tags ?? [], expiresInMs: expiresInMs(b.expiresIn) ?? null,
    });
    noteForAudit(req, { version: secret.version });
    return reply.status(201).send(toSecretWire(secret));
  });

  r.get('/v1/security/secrets', {
    config: { operation: 'secret.list', auditResource: () => 'secret:*' },
    schema: { tags, security, summary: 'List secrets (names ascending, no values), by tags and region', querystring: ListSecretsQuery, response: { 200: Responses.list, ...errors } },
  }, async (req) => {
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
    config: { operation: 'secret.read', auditResource: pathName },
    schema: {
      tags, security, summary: 'Read a secret: its newest version, or ?version=N of the last 10',
      params: NameParams, querystring: GetSecretQuery, response: { 200: Responses.secret, ...errors },
    },
  }, async (req) => {
    const secret = await deps.secrets.get(ownerOf(req), { userId: requirePrincipal(req).userId, via: 'api' }, req.params.name, req.query.version);
    noteForAudit(req, { version: secret.version });
    return toSecretWire(secret);
  });

  r.put('/v1/security/secrets/:name', {
    config: { operation: 'secret.update', auditResource: pathName },
    schema: {
      tags, security, summary: 'Write a new version of a secret',
      headers: RegionHeaders, params: NameParams, body: UpdateSecretBody, response: { 200: Responses.secret, ...writeErrors },
    },
  }, async (req) => {
    const b = req.body;
    const secret = await deps.secrets.update(ownerOf(req), actorOf(req), req.params.name, {
      value: b.value, ...(b.tags !== undefined ? { tags: b.tags } : {}), ...(b.expiresIn !== undefined ? { expiresInMs: expiresInMs(b.expiresIn) } : {}),
    });
    noteForAudit(req, { version: secret.version });
    return toSecretWire(secret);
  });

  r.delete('/v1/security/secrets/:name', {
    config: { operation: 'secret.delete', auditResource: pathName },
    schema: { tags, security, summary: 'Delete a secret and every version of it', params: NameParams, response: { 204: Responses.deleted, ...errors } },
  }, async (req, reply) => {
    await deps.secrets.delete(ownerOf(req), req.params.name);
    return reply.status(204).send(null);
  });

  await r.register(auditLogRoutes, { audit: deps.audit });
  // After the hooks above, so that they apply to these routes too.
  await app.register(apiKeyRoutes, { apiKeyManagement: deps.apiKeyManagement });
  await app.register(webhookRoutes, { webhooks: deps.webhooks });
  await app.register(mcpRoutes, { mcpResources: deps.mcpResources, mcpApprovals: deps.mcpApprovals, audit: deps.audit });
  await app.register(mcpRegistrationRoutes, { mcpResources: deps.mcpResources });
};
