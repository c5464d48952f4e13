import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import { isoTimestamp } from '../../core/clock.ts';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import { parseMetadataFilter } from '../../core/search/filters.ts';
import type { MemoryService } from '../../core/memories/memory.service.ts';
import type { Memory } from '../../core/memories/memory.types.ts';
import type { SearchService } from '../../core/search/search.service.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { markDeprecated } from '../http-kit/deprecation.ts';
import { readValidity } from '../http-kit/validity.ts';
import { createG1ErrorHandler } from './errors.ts';
import { splitList, toNewMemory, toPatch, toRelated, toSearchItem, toWire, toWireWithAccess } from './mappers.ts';
import { CreateBody, ErrorWire, IdParams, ListQuery, Responses, SearchBody, SimilarParams, SimilarQuery, UpdateBody } from './schemas.ts';

export interface G1Deps extends AuthDeps {
  /** Writes count the memory-write quota there. */
  memories: Pick<MemoryService, 'create' | 'createDeduplicated' | 'similarTo' | 'list' | 'get' | 'update' | 'delete' | 'relatedTo'>;
  search: Pick<SearchService, 'semantic'>;
  clock: Clock;
}

const errors = { 400: ErrorWire, 401: ErrorWire, 404: ErrorWire, 429: ErrorWire };

/** The list's offset: `offset`, or the first item of `page`; both at once is a 400 unless they agree. */
function listOffset(q: Static<typeof ListQuery>): number {
  if (q.page === undefined) return q.offset ?? 0;
  const fromPage = (q.page - 1) * q.limit;
  if (q.offset !== undefined && q.offset !== fromPage) {
    throw validationError([{ field: 'page', reason: 'invalid_value', message: `give page or offset, not both (page ${q.page} starts at offset ${fromPage})` }]);
  }
  return fromPage;
}

/** `related` when the request asked for it (`return_related: true`): near-duplicates of the written memory, valid now. */
async function relatedOf(deps: G1Deps, req: FastifyRequest, asked: boolean | undefined, memory: Memory) {
  return asked === true ? { related: (await deps.memories.relatedTo(scopeOf(req), memory)).map(toRelated) } : {};
}

/**
 * G1 create, shared by `POST /api/v1/memories` and its deprecated alias `POST /api/v1/store`: 201 with the new
 * memory; with `dedupe: true`, 200 with the stored one when its content is identical (docs/api.md, "Deduplication").
 * `supersedes` replaces those memories in the same write; `return_related` adds the near-duplicates
 * (docs/memory-lifecycle.md).
 */
async function createMemory(deps: G1Deps, req: FastifyRequest<{ Body: Static<typeof CreateBody> }>, reply: FastifyReply) {
  const principal = requirePrincipal(req);
  const input = toNewMemory(req.body);
  if (req.body.dedupe === true) {
    const { memory, deduplicated } = await deps.memories.createDeduplicated(scopeOf(req), principal, input);
    const related = await relatedOf(deps, req, req.body.return_related, memory);
    return reply.status(deduplicated ? 200 : 201).send({ success: true as const, data: toWire(memory), deduplicated, ...related });
  }
  const memory = await deps.memories.create(scopeOf(req), principal, input);
  const related = await relatedOf(deps, req, req.body.return_related, memory);
  return reply.status(201).send({ success: true as const, data: toWire(memory), ...related });
}

/**
 * `POST /api/v1/store`: the legacy name of G1 create, scheduled for removal in 2.0.0 (spec, Versioning). Same
 * request, answer and errors; answers carry `Deprecation`, `Sunset` and a `Link` to the docs. Register with prefix
 * `/api/v1/store`.
 */
export const g1StoreAliasRoutes: FastifyPluginAsync<G1Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));
  r.addHook('onSend', async (_req, reply) => { markDeprecated(reply); });
  r.post('/', {
    config: { operation: 'memory.create' },
    schema: {
      tags: ['G1 memories'], security: [{ apiKey: [] }], deprecated: true,
      summary: 'Deprecated alias of POST /api/v1/memories (removed in 2.0.0)',
      body: CreateBody, response: { 200: Responses.created, 201: Responses.created, ...errors, 409: ErrorWire, 413: ErrorWire },
    },
  }, async (req, reply) => createMemory(deps, req, reply));
};

/** G1: `/api/v1/memories`, authenticated by `X-API-Key`. Register with prefix `/api/v1/memories`. */
export const g1Routes: FastifyPluginAsync<G1Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  // onRequest: the key is checked before the body is even parsed.
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));
  const tags = ['G1 memories'];
  const security = [{ apiKey: [] }];

  r.post('/', {
    config: { operation: 'memory.create' },
    schema: {
      tags, security, summary: 'Create a memory (201), or with dedupe: true return the identical one already stored (200)',
      body: CreateBody, response: { 200: Responses.created, 201: Responses.created, ...errors, 409: ErrorWire, 413: ErrorWire },
    },
  }, async (req, reply) => createMemory(deps, req, reply));

  r.get('/', {
    config: { operation: 'memory.list' },
    schema: { tags, security, summary: 'List memories', querystring: ListQuery, response: { 200: Responses.list, ...errors } },
  }, async (req) => {
    const q = req.query;
    const offset = listOffset(q);
    const problems: FieldProblem[] = [];
    const validity = readValidity(q, deps.clock, problems);
    if (problems.length > 0) throw validationError(problems);
    const { items, total } = await deps.memories.list(scopeOf(req), {
      filter: { types: q.type ? [q.type] : undefined, tagsAny: splitList(q.tags) },
      limit: q.limit, offset, sortBy: q.sortBy, sortOrder: q.sortOrder,
    }, validity.option);
    return {
      success: true as const,
      data: items.map((m) => ({ ...toWire(m), ...validity.mark(m) })),
      pagination: { total, page: Math.floor(offset / q.limit) + 1, limit: q.limit, hasMore: offset + items.length < total },
    };
  });

  r.post('/search', {
    config: { operation: 'memory.search' },
    schema: { tags, security, summary: 'Semantic search', body: SearchBody, response: { 200: Responses.search, ...errors } },
  }, async (req) => {
    const principal = requirePrincipal(req);
    const b = req.body;
    const tagList = Array.isArray(b.tags) ? b.tags : splitList(b.tags);
    const problems: FieldProblem[] = [];
    const metadata = parseMetadataFilter(b.metadata, problems, 'metadata');
    const validity = readValidity(b, deps.clock, problems);
    if (problems.length > 0) throw validationError(problems);
    const filter = {
      types: b.type ? [b.type] : undefined, tagsAny: tagList && tagList.length > 0 ? tagList : undefined,
      metadata: metadata && Object.keys(metadata).length > 0 ? metadata : undefined,
    };
    const { hits, total } = await deps.search.semantic(
      { scope: scopeOf(req), userId: principal.userId, surface: 'g1', arrivedAt: req.arrivedAt },
      {
        query: b.query, limit: b.limit, threshold: b.threshold, filter, validity: validity.option,
        logFilters: { type: b.type, tags: tagList, metadata: filter.metadata, as_of: b.as_of, include_expired: b.include_expired },
      },
    );
    const results = hits.map((h) => ({ ...toSearchItem(h), ...validity.mark(h.memory) }));
    return { success: true as const, data: { results, total, query: b.query, threshold: b.threshold } };
  });

  r.get('/:id/similar', {
    config: { operation: 'memory.similar' },
    schema: {
      tags, security, summary: 'Near-duplicates: the memories most similar to one memory (itself excluded)',
      params: SimilarParams, querystring: SimilarQuery, response: { 200: Responses.similar, ...errors, 409: ErrorWire },
    },
  }, async (req) => {
    const q = req.query;
    const { memory, hits, total } = await deps.memories.similarTo(scopeOf(req), req.params.id, { limit: q.limit, threshold: q.threshold });
    return {
      success: true as const,
      data: { memory_id: memory.id, results: hits.map((h) => toSearchItem({ memory: h.memory, score: h.similarity })), total, threshold: q.threshold },
    };
  });

  r.get('/:id', {
    config: { operation: 'memory.read' },
    schema: { tags, security, summary: 'Get a memory by UUID or unambiguous prefix (counts an access)', params: IdParams, response: { 200: Responses.memoryWithAccess, ...errors, 409: ErrorWire } },
  }, async (req) => {
    const memory = await deps.memories.get(scopeOf(req), req.params.id);
    return { success: true as const, data: toWireWithAccess(memory) };
  });

  r.put('/:id', {
    config: { operation: 'memory.update' },
    schema: { tags, security, summary: 'Update a memory (all fields optional)', params: IdParams, body: UpdateBody, response: { 200: Responses.updated, ...errors, 409: ErrorWire, 413: ErrorWire } },
  }, async (req) => {
    const principal = requirePrincipal(req);
    const patch = toPatch(req.body);
    const memory = await deps.memories.update(scopeOf(req), principal, req.params.id, patch);
    return { success: true as const, data: toWire(memory), ...(await relatedOf(deps, req, req.body.return_related, memory)) };
  });

  r.delete('/:id', {
    config: { operation: 'memory.delete' },
    schema: { tags, security, summary: 'Delete a memory permanently', params: IdParams, response: { 200: Responses.deleted, ...errors, 409: ErrorWire } },
  }, async (req) => {
    const principal = requirePrincipal(req);
    const { id, deletedAt } = await deps.memories.delete(scopeOf(req), principal, req.params.id);
    return { success: true as const, message: 'Memory deleted', data: { id, deleted_at: isoTimestamp(deletedAt) } };
  });
};
