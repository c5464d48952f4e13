import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { DomainError } from '../../core/errors.ts';
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
  parent_topic_id: t.parentId,
  ...(typeof t.metadata.color === 'string' ? { color: t.metadata.color } : {}),
  ...(typeof t.metadata.icon === 'string' ? { icon: t.metadata.icon } : {}),
  user_id: t.createdBy, is_system: false,
});

/** @lanonasis/memory-client sends X-Project-Scope on every request; lists answer it as bare arrays. */
const wantsBareList = (headers: Record<string, unknown>) => headers['x-project-scope'] !== undefined;

/** The client's fields folded into the core's: color and icon as metadata keys, parent_topic_id as parent_id. */
function clientInput(b: { parent_id?: string | null | undefined; parent_topic_id?: string | null | undefined; color?: string | undefined; icon?: string | undefined; metadata?: unknown }) {
  if (b.parent_id !== undefined && b.parent_topic_id !== undefined && b.parent_id !== b.parent_topic_id) {
    throw new DomainError('VALIDATION_FAILED', 'Invalid request', { fields: [{ field: 'parent_topic_id', reason: 'conflict', message: 'differs from parent_id (give one of them)' }] });
  }
  const extra = { ...(b.color !== undefined ? { color: b.color } : {}), ...(b.icon !== undefined ? { icon: b.icon } : {}) };
  const given = b.metadata as Metadata | undefined;
  return {
    parentId: b.parent_id !== undefined ? b.parent_id : b.parent_topic_id,
    metadata: given !== undefined || Object.keys(extra).length > 0 ? { ...given, ...extra } : undefined,
    /** Set on top of the stored metadata when only color / icon are given (an update keeps the other keys). */
    extra: given === undefined && Object.keys(extra).length > 0 ? extra : undefined,
  };
}
const nodeWire = (n: TopicNode): ReturnType<typeof topicWire> & { children: Record<string, unknown>[] } => ({ ...topicWire(n), children: n.children.map(nodeWire) });

const errors = { 400: TopicResponses.error, 401: TopicResponses.error, 404: TopicResponses.error, 409: TopicResponses.error, 429: TopicResponses.error };

/** `/api/v1/topics`: topics that memories point at with topic_id. G1's envelope and `X-API-Key`. */
export const topicRoutes: FastifyPluginAsync<TopicDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));
  const tags = ['Topics'];
  const security = [{ apiKey: [] }];

  r.post('/', { config: { operation: 'topic.create' }, schema: { tags, security, summary: 'Create a topic', body: TopicCreateBody, response: { 201: TopicResponses.one, ...errors } } }, async (req, reply) => {
    const b = req.body;
    const c = clientInput(b);
    const topic = await deps.topics.create(scopeOf(req), requirePrincipal(req).userId, {
      name: b.name, description: b.description, parentId: c.parentId, metadata: c.metadata,
    });
    return reply.status(201).send({ success: true, data: topicWire(topic), ...topicWire(topic) });
  });

  r.get('/', { config: { operation: 'topic.list' }, schema: { tags, security, summary: 'List topics (flat and paged, or the whole hierarchy)', querystring: TopicListQuery, response: { 200: TopicResponses.list, ...errors } } }, async (req) => {
    const q = req.query;
    if (q.include_hierarchy) {
      const tree = (await deps.topics.hierarchy(scopeOf(req))).map(nodeWire);
      return wantsBareList(req.headers) ? tree : { success: true as const, data: tree };
    }
    const { items, total } = await deps.topics.list(scopeOf(req), { limit: q.limit, offset: q.offset });
    if (wantsBareList(req.headers)) return items.map(topicWire);
    return {
      success: true as const,
      data: items.map(topicWire),
      pagination: { total, page: Math.floor(q.offset / q.limit) + 1, limit: q.limit, hasMore: q.offset + items.length < total },
    };
  });

  r.get('/:id', { config: { operation: 'topic.read' }, schema: { tags, security, summary: 'Get a topic', params: TopicParams, response: { 200: TopicResponses.one, ...errors } } }, async (req) => {
    const topic = topicWire(await deps.topics.get(scopeOf(req), req.params.id));
    return { success: true as const, data: topic, ...topic };
  });

  r.put('/:id', { config: { operation: 'topic.update' }, schema: { tags, security, summary: 'Update a topic', params: TopicParams, body: TopicUpdateBody, response: { 200: TopicResponses.one, ...errors } } }, async (req) => {
    const b = req.body;
    const c = clientInput(b);
    const scope = scopeOf(req);
    const metadata = c.extra ? { ...(await deps.topics.get(scope, req.params.id)).metadata, ...c.extra } : c.metadata;
    const topic = topicWire(await deps.topics.update(scope, req.params.id, {
      name: b.name, description: b.description, parentId: c.parentId, metadata,
    }));
    return { success: true as const, data: topic, ...topic };
  });

  r.delete('/:id', { config: { operation: 'topic.delete' }, schema: { tags, security, summary: 'Delete a topic (its memories stay, without a topic; child topics move up)', params: TopicParams, response: { 200: TopicResponses.deleted, ...errors } } }, async (req) => {
    const { id, deletedAt } = await deps.topics.delete(scopeOf(req), req.params.id);
    return { success: true as const, message: 'Topic deleted', data: { id, deleted_at: isoTimestamp(deletedAt) } };
  });

  r.get('/:id/memories', { config: { operation: 'topic.memories' }, schema: { tags, security, summary: 'The memories of a topic', params: TopicParams, querystring: TopicMemoriesQuery, response: { 200: TopicResponses.memories, ...errors } } }, async (req) => {
    const q = req.query;
    const scope = scopeOf(req);
    const { items, total } = await deps.topics.memoriesOf(scope, req.params.id, { limit: q.limit, offset: q.offset, sortBy: q.sortBy, sortOrder: q.sortOrder });
    const topic = await deps.topics.get(scope, req.params.id);
    const children = (await deps.topics.hierarchy(scope)).flatMap(function find(n): TopicNode[] { return n.id === topic.id ? n.children : n.children.flatMap(find); });
    const memories = items.map(toWire);
    return {
      success: true as const,
      data: memories,
      pagination: { total, page: Math.floor(q.offset / q.limit) + 1, limit: q.limit, hasMore: q.offset + items.length < total },
      // As @lanonasis/memory-client's getTopicWithMemories reads it.
      topic: topicWire(topic), memories, total_memories: total,
      subtopics: children.map((c) => ({ id: c.id, name: c.name, memory_count: c.memoryCount })),
    };
  });
};
