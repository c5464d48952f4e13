import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Principal } from '../../core/api-keys/api-key.types.ts';
import { validationError } from '../../core/errors.ts';
import type { EventScope } from '../../core/events/event.types.ts';
import { authorizeSecurityEvents } from '../../core/webhooks/security-event-permissions.ts';
import type { WebhookService } from '../../core/webhooks/webhook.service.ts';
import { requirePrincipal } from '../http-kit/auth.ts';
import { noteForAudit } from './audit-recorder.ts';
import { G11ErrorWire } from './errors.ts';
import { toCreatedWebhookWire, toWebhookWire } from './webhooks.mappers.ts';
import { CreateWebhookBody, ListWebhooksQuery, UpdateWebhookBody, WebhookParams, WebhookResponses } from './webhooks.schemas.ts';

export interface WebhookRouteDeps {
  webhooks: WebhookService;
}

/** `webhook:<id>`, or `webhook` when the id is not one. */
const webhookResource = (req: FastifyRequest): string => {
  const id = (req.params as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' && /^whk_[A-Za-z0-9]{1,60}$/.test(id) ? `webhook:${id}` : 'webhook';
};

/** G11 webhooks belong to the key's tenant and mode (no workspace). */
function tenantScope(p: Principal): EventScope {
  return { tenantId: p.tenantId, mode: p.mode, workspace: null };
}

/** List cursors are opaque to clients: the offset of the next page, in base64url. */
const MAX_OFFSET = 1_000_000_000;
const encodeCursor = (offset: number): string => Buffer.from(`o:${offset}`, 'utf8').toString('base64url');
function decodeCursor(cursor: string): number {
  const m = /^o:(\d{1,10})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const offset = m ? Number(m[1]) : NaN;
  if (!(offset >= 0 && offset <= MAX_OFFSET)) throw validationError([{ field: 'cursor', reason: 'invalid_value', message: 'is not a cursor of this list' }]);
  return offset;
}

const errors = { 400: G11ErrorWire, 401: G11ErrorWire, 403: G11ErrorWire, 404: G11ErrorWire, 429: G11ErrorWire };
const writeErrors = { ...errors, 413: G11ErrorWire, 415: G11ErrorWire };

/**
 * G11 webhooks (`/v1/security/webhooks`): the secrets component's events (`secret.created`, `secret.accessed`,
 * `apikey.rotated`) POSTed to a URL, through the same durable dispatcher as G9 and G10, delivered and signed as G10's.
 * Registered inside the G11 plugin, after its hooks: authentication, the gateway and G11 limits, the audit log and
 * the G11 error envelope apply.
 */
export const webhookRoutes: FastifyPluginAsync<WebhookRouteDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['G11 webhooks'];
  const security = [{ bearer: [] }];
  const caller = requirePrincipal;

  r.post('/v1/security/webhooks', {
    config: { operation: 'security_webhook.create', auditResource: () => 'webhook' },
    schema: {
      tags, security,
      summary: 'Register a webhook for secret.created, secret.accessed and apikey.rotated; the signing secret is shown in this answer only',
      body: CreateWebhookBody, response: { 201: WebhookResponses.created, ...writeErrors },
    },
  }, async (req, reply) => {
    const who = caller(req);
    const b = req.body;
    authorizeSecurityEvents(who, b.events);
    const created = await deps.webhooks.create(who, tenantScope(who), 'g11', { url: b.url, events: b.events, secret: b.secret });
    noteForAudit(req, { webhookId: created.id });
    return reply.status(201).send(toCreatedWebhookWire(created));
  });

  r.get('/v1/security/webhooks', {
    config: { operation: 'security_webhook.list', auditResource: () => 'webhook:*' },
    schema: {
      tags, security, summary: 'List the webhooks of the calling key\'s tenant and mode, oldest first (no secrets)',
      querystring: ListWebhooksQuery, response: { 200: WebhookResponses.list, ...errors },
    },
  }, async (req) => {
    const who = caller(req);
    const q = req.query;
    const offset = q.cursor === undefined ? 0 : decodeCursor(q.cursor);
    const { items, total } = await deps.webhooks.list(tenantScope(who), 'g11', { event: q.event, limit: q.limit, offset });
    const next = offset + items.length;
    const more = items.length > 0 && next < total;
    noteForAudit(req, { returned: items.length });
    return {
      data: items.map(toWebhookWire),
      pagination: { cursor: more ? encodeCursor(next) : null, hasMore: more, totalCount: total },
    };
  });

  r.get('/v1/security/webhooks/:id', {
    config: { operation: 'security_webhook.read', auditResource: webhookResource },
    schema: { tags, security, summary: 'Read a webhook (never its secret)', params: WebhookParams, response: { 200: WebhookResponses.webhook, ...errors } },
  }, async (req) => {
    const who = caller(req);
    return toWebhookWire(await deps.webhooks.get(tenantScope(who), 'g11', req.params.id));
  });

  r.put('/v1/security/webhooks/:id', {
    config: { operation: 'security_webhook.update', auditResource: webhookResource },
    schema: {
      tags, security, summary: 'Change a webhook\'s url, events or status (active resumes a failed one)',
      params: WebhookParams, body: UpdateWebhookBody, response: { 200: WebhookResponses.webhook, ...writeErrors },
    },
  }, async (req) => {
    const who = caller(req);
    const b = req.body;
    if (b.events !== undefined) authorizeSecurityEvents(who, b.events);
    const updated = await deps.webhooks.update(tenantScope(who), 'g11', req.params.id, {
      url: b.url, events: b.events, status: b.status as 'active' | 'disabled' | undefined,
    });
    return toWebhookWire(updated);
  });

  r.delete('/v1/security/webhooks/:id', {
    config: { operation: 'security_webhook.delete', auditResource: webhookResource },
    schema: {
      tags, security, summary: 'Delete a webhook and its pending deliveries',
      params: WebhookParams, response: { 204: WebhookResponses.deleted, ...errors },
    },
  }, async (req, reply) => {
    const who = caller(req);
    await deps.webhooks.delete(tenantScope(who), 'g11', req.params.id);
    return reply.status(204).send(null);
  });
};
