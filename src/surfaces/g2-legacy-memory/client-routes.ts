import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../../core/clock.ts';
import { DomainError, type FieldProblem } from '../../core/errors.ts';
import type { MemoryService } from '../../core/memories/memory.service.ts';
import type { MemoryFilter } from '../../core/memories/memory.types.ts';
import type { Scope } from '../../core/scope.ts';
import type { ScoredHit, SearchService } from '../../core/search/search.service.ts';
import type { TopicService } from '../../core/topics/topic.service.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { collectProblems } from '../http-kit/field-problems.ts';
import { createG2ErrorHandler } from './errors.ts';
import { clientView } from './mappers.ts';
import { ErrorWire } from './schemas.ts';

/**
 * The routes @lanonasis/memory-client calls under `/api/v1/memory` that the spec does not define: list, search,
 * bulk delete and stats (docs/api.md, "G2 and @lanonasis/memory-client"). Same credential, scope, workspace and
 * error envelope as the spec's G2 routes. Registered with prefix `/api/v1/memory`, before nothing else: a static
 * path (`/stats`) wins over `/:id`.
 */
export interface G2ClientDeps extends AuthDeps {
  memories: Pick<MemoryService, 'list' | 'usage' | 'deleteByLegacyIds' | 'legacyIdOf'>;
  search: Pick<SearchService, 'semantic' | 'keyword' | 'hybrid'>;
  topics: Pick<TopicService, 'list'>;
  clock: Clock;
}

const STATUSES = ['active', 'archived', 'draft', 'deleted'];
const errors = { 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 429: ErrorWire };
const Loose = Type.Object({}, { additionalProperties: true });
// Schemas are module constants: the apps of a process share what is compiled from them (http-kit/serialization.ts).
const ListResponse = Type.Object({ data: Type.Array(Loose), pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), pages: Type.Integer() }) });
const BulkDeleteResponse = Type.Object({ deleted_count: Type.Integer(), deleted_ids: Type.Array(Type.String()), failed_ids: Type.Array(Type.String()) });

const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  memory_type: Type.Optional(Type.String()),
  topic_id: Type.Optional(Type.String()),
  project_ref: Type.Optional(Type.String()),
  status: Type.Optional(Type.Enum(STATUSES, { description: 'Memories have no states: every memory is active, so other values list nothing' })),
  tags: Type.Optional(Type.String({ description: 'Comma-separated; a memory matches when it has any of them' })),
  sort: Type.Enum(['created_at', 'updated_at', 'title'], { default: 'created_at' }),
  order: Type.Enum(['asc', 'desc'], { default: 'desc' }),
}, { additionalProperties: true });

const SearchBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 10_000 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  threshold: Type.Number({ minimum: 0, maximum: 1, default: 0.7, description: 'Lowest score, the calibrated similarity (docs/api.md, "Scores")' }),
  memory_types: Type.Optional(Type.Array(Type.String())),
  type: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
  topic_id: Type.Optional(Type.String()),
  project_ref: Type.Optional(Type.String()),
  status: Type.Optional(Type.Enum(STATUSES)),
  search_mode: Type.Enum(['vector', 'text', 'hybrid'], { default: 'vector', description: 'vector: semantic (default); text: keyword (BM25); hybrid: both' }),
  filters: Type.Optional(Type.Object({
    tags: Type.Optional(Type.Array(Type.String())),
    topic_id: Type.Optional(Type.String()),
    project_id: Type.Optional(Type.String()),
    date_range: Type.Optional(Type.Object({ from: Type.Optional(Type.String()), to: Type.Optional(Type.String()) }, { additionalProperties: true })),
  }, { additionalProperties: true })),
}, { additionalProperties: true });

const BulkDeleteBody = Type.Object({
  memory_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 }),
}, { additionalProperties: true });

const splitTags = (s: string | undefined) => (s ? s.split(',').map((t) => t.trim()).filter((t) => t.length > 0) : undefined);
const nonEmpty = <T>(a: T[] | undefined) => (a && a.length > 0 ? a : undefined);

function dateOf(raw: string | undefined, field: string, problems: FieldProblem[]): Date | undefined {
  if (raw === undefined) return undefined;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) {
    problems.push({ field, reason: 'invalid_format', message: 'must be an ISO 8601 date or date-time' });
    return undefined;
  }
  return new Date(t);
}

export const g2ClientRoutes: FastifyPluginAsync<G2ClientDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG2ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'bearer'));
  const tags = ['G2 legacy memory'];
  const security = [{ bearer: [] }];
  function caller(req: FastifyRequest): { principal: ReturnType<typeof requirePrincipal>; scope: Scope } {
    const principal = requirePrincipal(req);
    const problems: FieldProblem[] = [];
    const scope = collectProblems(problems, () => scopeOf(req));
    if (!scope) throw new DomainError('VALIDATION_FAILED', 'Invalid request', { fields: problems });
    return { principal, scope };
  }
  const view = (m: Parameters<typeof clientView>[0]) => clientView(m, deps.memories.legacyIdOf(m));

  r.get('/', {
    config: { operation: 'memory.list' },
    schema: {
      tags, security, summary: 'List memories (for @lanonasis/memory-client)', querystring: ListQuery,
      response: { 200: ListResponse, ...errors },
    },
  }, async (req) => {
    const { scope } = caller(req);
    const q = req.query;
    const page = { page: q.page, limit: q.limit };
    if (q.status !== undefined && q.status !== 'active') return { data: [], pagination: { ...page, total: 0, pages: 0 } };
    const filter: MemoryFilter = {
      types: q.memory_type ? [q.memory_type] : undefined, tagsAny: nonEmpty(splitTags(q.tags)), topicId: q.topic_id?.toLowerCase(),
      metadata: q.project_ref ? { project_ref: q.project_ref } : undefined,
    };
    const { items, total } = await deps.memories.list(scope, { filter, limit: q.limit, offset: (q.page - 1) * q.limit, sortBy: q.sort, sortOrder: q.order });
    return { data: items.map(view), pagination: { ...page, total, pages: Math.ceil(total / q.limit) } };
  });

  r.post('/search', {
    config: { operation: 'memory.search' },
    schema: {
      tags, security, summary: 'Search memories (searchMemories and enhancedSearch of @lanonasis/memory-client)', body: SearchBody,
      response: { 200: Loose, ...errors },
    },
  }, async (req) => {
    const { principal, scope } = caller(req);
    const b = req.body;
    const problems: FieldProblem[] = [];
    const from = dateOf(b.filters?.date_range?.from, 'filters.date_range.from', problems);
    const to = dateOf(b.filters?.date_range?.to, 'filters.date_range.to', problems);
    if (problems.length > 0) throw new DomainError('VALIDATION_FAILED', 'Invalid request', { fields: problems });
    const types = nonEmpty(b.memory_types) ?? (b.type ? [b.type] : undefined);
    const projectRef = b.project_ref ?? b.filters?.project_id;
    const filter: MemoryFilter = {
      types, tagsAny: nonEmpty(b.tags ?? b.filters?.tags), topicId: (b.topic_id ?? b.filters?.topic_id)?.toLowerCase(),
      metadata: projectRef ? { project_ref: projectRef } : undefined, createdFrom: from, createdTo: to,
    };
    const started = performance.now();
    const ctx = { scope, userId: principal.userId, surface: 'g2', arrivedAt: req.arrivedAt };
    const common = { query: b.query, limit: b.limit, filter, logFilters: { memory_types: types, tags: filter.tagsAny, search_mode: b.search_mode } };
    const outcome: { hits: ScoredHit[]; total: number } = b.status !== undefined && b.status !== 'active'
      ? { hits: [] as ScoredHit[], total: 0 }
      : b.search_mode === 'text' ? await deps.search.keyword(ctx, common)
        : b.search_mode === 'hybrid' ? await deps.search.hybrid(ctx, { ...common, semanticWeight: 0.7, keywordWeight: 0.3, rerank: true, threshold: b.threshold })
          : await deps.search.semantic(ctx, { ...common, threshold: b.threshold });
    const ms = Math.round((performance.now() - started) * 100) / 100;
    const results = outcome.hits.map((h) => ({
      ...view(h.memory),
      similarity_score: Math.round(h.score * 1e6) / 1e6,
      ...(h.keywordScore !== undefined ? { text_rank: Math.round(h.keywordScore * 1e6) / 1e6 } : {}),
      combined_score: Math.round(h.score * 1e6) / 1e6,
    }));
    return {
      results, total_results: outcome.total, total: outcome.total, query: b.query, search_mode: b.search_mode,
      threshold: b.threshold, search_time_ms: ms, execution_time_ms: ms,
    };
  });

  r.post('/bulk/delete', {
    config: { operation: 'memory.delete_many' },
    schema: {
      tags, security, summary: 'Delete up to 100 memories by id (for @lanonasis/memory-client)', body: BulkDeleteBody,
      response: { 200: BulkDeleteResponse, ...errors },
    },
  }, async (req) => {
    const { principal, scope } = caller(req);
    const { deleted, failed } = await deps.memories.deleteByLegacyIds(scope, principal, req.body.memory_ids);
    return { deleted_count: deleted.length, deleted_ids: deleted, failed_ids: failed };
  });

  r.get('/stats', {
    config: { operation: 'memory.stats' },
    schema: { tags, security, summary: 'Counts of this workspace\'s memories (for @lanonasis/memory-client)', response: { 200: Loose, ...errors } },
  }, async (req) => {
    const { scope } = caller(req);
    const now = deps.clock.now();
    const [usage, recent, topics] = await Promise.all([
      deps.memories.usage(scope, { since: new Date(now.getTime() - 86_400_000), top: 1 }),
      deps.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'desc' }),
      deps.topics.list(scope, { limit: 1, offset: 0 }),
    ]);
    const most = usage.mostAccessed[0];
    return {
      total_memories: usage.total,
      memories_by_type: usage.byType,
      total_topics: topics.total,
      ...(most ? { most_accessed_memory: deps.memories.legacyIdOf(most) } : {}),
      recent_memories: recent.items.map((m) => deps.memories.legacyIdOf(m)),
    };
  });
};
