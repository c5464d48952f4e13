import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireScope } from '../../core/api-keys/api-key.service.ts';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { Metadata } from '../../core/memories/memory.types.ts';
import type { TopicNode, TopicService, TopicWithCount } from '../../core/topics/topic.service.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG1ErrorHandler } from './errors.ts';
import { toWire } from './mappers.ts';
import { TopicCreateBody, TopicListQuery, TopicMemoriesQuery, TopicParams, TopicResponses, TopicUpdateBody } from './topics.schemas.ts';

export interface TopicDeps extends AuthDeps {
  topics: TopicService;
  clock: Clock;
}

const topicWire = (t: TopicWithCount) => ({
  id: t.id, name: t.name, description: t.description, parent_id: t.parentId, metadata: t.metadata,
  memory_count: t.memoryCount, created_at: isoTimestamp(t.createdAt), updated_at: isoTimestamp(t.updatedAt),
});
const nodeWire = (n: TopicNode): ReturnType<typeof topicWire> & { children: Record<string, unknown>[] } => ({ ...topicWire(n), children: n.children.map(nodeWire) });

const errors = { 400: TopicResponses.error, 401: TopicResponses.error, 404: TopicResponses.error, 409: TopicResponses.error, 429: TopicResponses.error };

/** `/api/v1/topics`: topics that memories point at with topic_id. G1's envelope and `X-API-Key`. */
export const topicRoutes: FastifyPluginAsync<TopicDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));
  const tags = ['Topics'];
  const security = [{ apiKey: [] }];
  const reader = (req: Parameters<typeof requirePrincipal>[0]) => requireScope(requirePrincipal(req), 'memories:read');
  const writer = (req: Parameters<typeof requirePrincipal>[0]) => requireScope(requirePrincipal(req), 'memories:write');

  r.post('/', { schema: { tags, security, summary: 'Create a topic', body: TopicCreateBody, response: { 201: TopicResponses.one, ...errors } } }, async (req, reply) => {
    writer(req);
    const b = req.body;
    const topic = await deps.topics.create(scopeOf(req), requirePrincipal(req).userId, {
      name: b.name, description: b.description, parentId: b.parent_id, metadata: b.metadata as Metadata | undefined,
    });
    return reply.status(201).send({ success: true, data: topicWire(topic) });
  });

  r.get('/', { schema: { tags, security, summary: 'List topics (flat and paged, or the whole hierarchy)', querystring: TopicListQuery, response: { 200: TopicResponses.list, ...errors } } }, async (req) => {
    reader(req);
    const q = req.query;
    if (q.include_hierarchy) return { success: true as const, data: (await deps.topics.hierarchy(scopeOf(req))).map(nodeWire) };
    const { items, total } = await deps.topics.list(scopeOf(req), { limit: q.limit, offset: q.offset });
    return {
      success: true as const,
      data: items.map(topicWire),
      pagination: { total, page: Math.floor(q.offset / q.limit) + 1, limit: q.limit, hasMore: q.offset + items.length < total },
    };
  });

  r.get('/:id', { schema: { tags, security, summary: 'Get a topic', params: TopicParams, response: { 200: TopicResponses.one, ...errors } } }, async (req) => {
    reader(req);
    return { success: true as const, data: topicWire(await deps.topics.get(scopeOf(req), req.params.id)) };
  });

  r.put('/:id', { schema: { tags, security, summary: 'Update a topic', params: TopicParams, body: TopicUpdateBody, response: { 200: TopicResponses.one, ...errors } } }, async (req) => {
    writer(req);
    const b = req.body;
    const topic = await deps.topics.update(scopeOf(req), req.params.id, {
      name: b.name, description: b.description, parentId: b.parent_id, metadata: b.metadata as Metadata | undefined,
    });
    return { success: true as const, data: topicWire(topic) };
  });

  r.delete('/:id', { schema: { tags, security, summary: 'Delete a topic (its memories stay, without a topic; child topics move up)', params: TopicParams, response: { 200: TopicResponses.deleted, ...errors } } }, async (req) => {
    writer(req);
    const { id, deletedAt } = await deps.topics.delete(scopeOf(req), req.params.id);
    return { success: true as const, message: 'Topic deleted', data: { id, deleted_at: isoTimestamp(deletedAt) } };
  });

  r.get('/:id/memories', { schema: { tags, security, summary: 'The memories of a topic', params: TopicParams, querystring: TopicMemoriesQuery, response: { 200: TopicResponses.memories, ...errors } } }, async (req) => {
    reader(req);
    const q = req.query;
    const { items, total } = await deps.topics.memoriesOf(scopeOf(req), req.params.id, { limit: q.limit, offset: q.offset, sortBy: q.sortBy, sortOrder: q.sortOrder });
    return {
      success: true as const,
      data: items.map(toWire),
      pagination: { total, page: Math.floor(q.offset / q.limit) + 1, limit: q.limit, hasMore: q.offset + items.length < total },
    };
  });
};
