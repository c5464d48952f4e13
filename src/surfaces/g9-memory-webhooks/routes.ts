import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import type { EventScope } from '../../core/events/event.types.ts';
import type { WebhookService } from '../../core/webhooks/webhook.service.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG9ErrorHandler } from './errors.ts';
import { toCreatedWire, toListItem, toNewWebhook, toUpdate, toWire } from './mappers.ts';
import { CreateBody, ErrorWire, IdParams, ListQuery, Responses, UpdateBody } from './schemas.ts';

export interface G9Deps extends AuthDeps {
  webhooks: WebhookService;
  clock: Clock;
}

const errors = { 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 404: ErrorWire, 429: ErrorWire };

/** G9 webhooks belong to the caller's tenant, mode and workspace (`X-Workspace-ID`, default `default`). */
const webhookScope = (req: FastifyRequest): EventScope => ({ ...scopeOf(req) });

/**
 * G9: webhooks for memory events, `Authorization: Bearer`. Register with prefix `/api/v1/webhooks`.
 * Reads need `memories:read`, changes `memories:write`.
 */
export const g9Routes: FastifyPluginAsync<G9Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG9ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'bearer'));
  const tags = ['G9 webhooks'];
  const security = [{ bearer: [] }];

  r.post('/', {
    config: { operation: 'webhook.create' },
    schema: {
      tags, security, summary: 'Register a webhook for memory events (10 creations per hour per key)',
      body: CreateBody, response: { 201: Responses.created, ...errors, 413: ErrorWire, 415: ErrorWire },
    },
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    const webhook = await deps.webhooks.create(principal, webhookScope(req), 'g9', toNewWebhook(req.body));
    return reply.status(201).send({ success: true as const, data: toCreatedWire(webhook) });
  });

  r.get('/', {
    config: { operation: 'webhook.list' },
    schema: { tags, security, summary: 'List webhooks (oldest first)', querystring: ListQuery, response: { 200: Responses.list, ...errors } },
  }, async (req) => {
    const q = req.query;
    const { items, total } = await deps.webhooks.list(webhookScope(req), 'g9', q);
    return {
      success: true as const,
      data: {
        webhooks: items.map(toListItem),
        pagination: { total, limit: q.limit, offset: q.offset, has_more: q.offset + items.length < total },
      },
    };
  });

  r.get('/:webhook_id', {
    config: { operation: 'webhook.read' },
    schema: { tags, security, summary: 'Get a webhook (without its secret; beyond the spec)', params: IdParams, response: { 200: Responses.webhook, ...errors } },
  }, async (req) => {
    return { success: true as const, data: toWire(await deps.webhooks.get(webhookScope(req), 'g9', req.params.webhook_id)) };
  });

  r.put('/:webhook_id', {
    config: { operation: 'webhook.update' },
    schema: {
      tags, security, summary: 'Update any of events, active, retry_policy (and url, filters)',
      params: IdParams, body: UpdateBody, response: { 200: Responses.webhook, ...errors, 413: ErrorWire, 415: ErrorWire },
    },
  }, async (req) => {
    const webhook = await deps.webhooks.update(webhookScope(req), 'g9', req.params.webhook_id, toUpdate(req.body));
    return { success: true as const, data: toWire(webhook) };
  });

  r.delete('/:webhook_id', {
    config: { operation: 'webhook.delete' },
    schema: { tags, security, summary: 'Delete a webhook and its pending deliveries', params: IdParams, response: { 200: Responses.deleted, ...errors } },
  }, async (req) => {
    await deps.webhooks.delete(webhookScope(req), 'g9', req.params.webhook_id);
    return { success: true as const, data: { id: req.params.webhook_id, deleted: true as const } };
  });
};
