import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiKeyManagement } from '../../core/api-keys/api-key-management.service.ts';
import { requirePrincipal } from '../http-kit/auth.ts';
import { ApiKeyParams, ApiKeyResponses, CreateApiKeyBody, ListApiKeysQuery, RotateApiKeyBody, UpdateApiKeyBody } from './api-keys.schemas.ts';
import { G11ErrorWire } from './errors.ts';
import { toApiKeyWire, toIssuedApiKeyWire } from './mappers.ts';

export interface ApiKeyRouteDeps {
  apiKeyManagement: ApiKeyManagement;
}

/** `api-key:<id>` (the record's id, never the key), or `api-key` when the id is not one. */
const apiKeyResource = (req: FastifyRequest): string => {
  const id = (req.params as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' && /^key_[A-Za-z0-9]{1,60}$/.test(id) ? `api-key:${id}` : 'api-key';
};

const errors = { 400: G11ErrorWire, 401: G11ErrorWire, 403: G11ErrorWire, 404: G11ErrorWire, 429: G11ErrorWire };
const writeErrors = { ...errors, 409: G11ErrorWire, 413: G11ErrorWire, 415: G11ErrorWire };

/**
 * G11 API keys (`/v1/security/api-keys`). Registered inside the G11 plugin, after its hooks: authentication, the
 * gateway and G11 limits, and the G11 error envelope apply. The caller works on the keys of its own tenant and mode.
 */
export const apiKeyRoutes: FastifyPluginAsync<ApiKeyRouteDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const keys = deps.apiKeyManagement;
  const tags = ['G11 API keys'];
  const security = [{ bearer: [] }];
  const caller = requirePrincipal;

  r.post('/v1/security/api-keys', {
    config: { operation: 'apikey.create', auditResource: () => 'api-key' },
    schema: {
      tags, security, summary: 'Create an API key of the calling key\'s tenant and mode; the key is shown in this answer only',
      body: CreateApiKeyBody, response: { 201: ApiKeyResponses.issued, ...writeErrors },
    },
  }, async (req, reply) => {
    const who = caller(req);
    const b = req.body;
    const issued = await keys.create(who, {
      name: b.name, scopes: b.scopes, tier: b.tier,
      ...(b.expiresAt === undefined ? {} : { expiresAt: b.expiresAt === null ? null : new Date(b.expiresAt) }),
    });
    return reply.status(201).send(toIssuedApiKeyWire(issued));
  });

  r.get('/v1/security/api-keys', {
    config: { operation: 'apikey.list', auditResource: () => 'api-key:*' },
    schema: {
      tags, security, summary: 'List the API keys of the calling key\'s tenant and mode, oldest first (never the keys themselves)',
      querystring: ListApiKeysQuery, response: { 200: ApiKeyResponses.list, ...errors },
    },
  }, async (req) => {
    const page = await keys.list(caller(req), { limit: req.query.limit, cursor: req.query.cursor ?? null });
    return {
      data: page.items.map(toApiKeyWire),
      pagination: { cursor: page.nextCursor, hasMore: page.nextCursor !== null, totalCount: page.total },
    };
  });

  r.get('/v1/security/api-keys/:id', {
    config: { operation: 'apikey.read', auditResource: apiKeyResource },
    schema: { tags, security, summary: 'Read an API key (never the key itself)', params: ApiKeyParams, response: { 200: ApiKeyResponses.key, ...errors } },
  }, async (req) => toApiKeyWire(await keys.get(caller(req), req.params.id)));

  r.put('/v1/security/api-keys/:id', {
    config: { operation: 'apikey.update', auditResource: apiKeyResource },
    schema: {
      tags, security, summary: 'Rename an API key or replace its scopes (effective from its next request)',
      params: ApiKeyParams, body: UpdateApiKeyBody, response: { 200: ApiKeyResponses.key, ...writeErrors },
    },
  }, async (req) => {
    const who = caller(req);
    return toApiKeyWire(await keys.update(who, req.params.id, { name: req.body.name, scopes: req.body.scopes }));
  });

  r.delete('/v1/security/api-keys/:id', {
    config: { operation: 'apikey.revoke', auditResource: apiKeyResource },
    schema: {
      tags, security, summary: 'Revoke an API key: its next request is refused (the calling key may revoke itself)',
      params: ApiKeyParams, response: { 204: ApiKeyResponses.revoked, ...writeErrors },
    },
  }, async (req, reply) => {
    await keys.revoke(caller(req), req.params.id);
    return reply.status(204).send(null);
  });

  r.post('/v1/security/api-keys/:id/rotate', {
    config: { operation: 'apikey.rotate', auditResource: apiKeyResource },
    schema: {
      tags, security, summary: 'Replace an API key by a new one; the old one keeps working for the grace period (default 24 h)',
      params: ApiKeyParams, body: RotateApiKeyBody, response: { 201: ApiKeyResponses.issued, ...writeErrors },
    },
    // Every option has a default: a bare POST (no body, no Content-Type) rotates with them.
    preValidation: async (req) => { req.body ??= {}; },
  }, async (req, reply) => {
    const who = caller(req);
    const issued = await keys.rotate(who, req.params.id, { gracePeriodSeconds: req.body.gracePeriodSeconds });
    return reply.status(201).send(toIssuedApiKeyWire(issued));
  });
};
