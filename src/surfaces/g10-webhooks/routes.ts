import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import type { EventScope } from '../../core/events/event.types.ts';
import type { EventPublisher } from '../../core/webhooks/event-publisher.ts';
import type { WebhookService } from '../../core/webhooks/webhook.service.ts';
import { authGuard, requirePrincipal, type AuthDeps } from '../http-kit/auth.ts';
import { createG10ErrorHandler } from './errors.ts';
import { toCreatedWire, toEventWire, toWire } from './mappers.ts';
import { CreateBody, ErrorWire, IdParams, ListQuery, PublishBody, PublishHeaders, Responses, UpdateBody } from './schemas.ts';

export interface G10Deps extends AuthDeps {
  webhooks: WebhookService;
  producerEvents: EventPublisher;
  clock: Clock;
}

const errors = { 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 404: ErrorWire, 429: ErrorWire };

/** Largest `POST /v1/events` body; `data` itself may be at most 64 KiB as JSON (checked in the core). */
const MAX_EVENT_BODY_BYTES = 256 * 1024;

/** G10 webhooks and events belong to the caller's tenant and mode; there are no workspaces here. */
function tenantScope(req: FastifyRequest): EventScope {
  const p = requirePrincipal(req);
  return { tenantId: p.tenantId, mode: p.mode, workspace: null };
}

/**
 * G10: generic webhooks (`/v1/webhooks`) and the producer events API (`POST /v1/events`), `X-API-Key`. Register
 * without a prefix. Reads need `memories:read`; changes and publishing `memories:write`.
 */
export const g10Routes: FastifyPluginAsync<G10Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG10ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));
  const tags = ['G10 webhooks'];
  const security = [{ apiKey: [] }];

  r.post('/v1/webhooks', {
    config: { operation: 'webhook.create' },
    schema: {
      tags, security, summary: 'Register a webhook for generic events (10 creations per hour per key)',
      body: CreateBody, response: { 201: Responses.created, ...errors, 413: ErrorWire, 415: ErrorWire },
    },
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    const b = req.body;
    const webhook = await deps.webhooks.create(principal, tenantScope(req), 'g10', { url: b.url, events: b.events, description: b.description });
    return reply.status(201).send({ success: true as const, data: toCreatedWire(webhook) });
  });

  r.get('/v1/webhooks', {
    config: { operation: 'webhook.list' },
    schema: { tags, security, summary: 'List webhooks (oldest first)', querystring: ListQuery, response: { 200: Responses.list, ...errors } },
  }, async (req) => {
    const q = req.query;
    const { items, total } = await deps.webhooks.list(tenantScope(req), 'g10', q);
    return {
      success: true as const,
      data: {
        webhooks: items.map(toWire),
        pagination: { total, limit: q.limit, offset: q.offset, has_more: q.offset + items.length < total },
      },
    };
  });

  r.get('/v1/webhooks/:id', {
    config: { operation: 'webhook.read' },
    schema: { tags, security, summary: 'Get a webhook (without its secret)', params: IdParams, response: { 200: Responses.webhook, ...errors } },
  }, async (req) => {
    return { success: true as const, data: toWire(await deps.webhooks.get(tenantScope(req), 'g10', req.params.id)) };
  });

  r.patch('/v1/webhooks/:id', {
    config: { operation: 'webhook.update' },
    schema: {
      tags, security, summary: 'Change events, status (active | disabled), description or url',
      params: IdParams, body: UpdateBody, response: { 200: Responses.webhook, ...errors, 413: ErrorWire, 415: ErrorWire },
    },
  }, async (req) => {
    const b = req.body;
    const webhook = await deps.webhooks.update(tenantScope(req), 'g10', req.params.id, {
      events: b.events, status: b.status as 'active' | 'disabled' | undefined, description: b.description, url: b.url,
    });
    return { success: true as const, data: toWire(webhook) };
  });

  r.delete('/v1/webhooks/:id', {
    config: { operation: 'webhook.delete' },
    schema: { tags, security, summary: 'Delete a webhook and its pending deliveries', params: IdParams, response: { 200: Responses.deleted, ...errors } },
  }, async (req) => {
    await deps.webhooks.delete(tenantScope(req), 'g10', req.params.id);
    return { success: true as const, data: { id: req.params.id, deleted: true as const } };
  });

  r.post('/v1/events', {
    config: { operation: 'event.publish' },
    bodyLimit: MAX_EVENT_BODY_BYTES,
    schema: {
      tags, security,
      summary: 'Publish an event: queued for every active webhook of this tenant and mode that subscribes to its type',
      headers: PublishHeaders, body: PublishBody,
      response: { 201: Responses.event, ...errors, 409: ErrorWire, 413: ErrorWire, 415: ErrorWire },
    },
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    const key = req.headers['idempotency-key'];
    const { event, replayed } = await deps.producerEvents.publish(
      principal, { type: req.body.type, data: req.body.data as Record<string, unknown> }, key,
    );
    if (replayed) reply.header('Idempotent-Replayed', 'true');
    return reply.status(201).send({ success: true as const, data: toEventWire(event) });
  });
};
