import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import { DomainError, type FieldProblem } from '../../core/errors.ts';
import type { MemoryService } from '../../core/memories/memory.service.ts';
import { bucketCount, MAX_BUCKETS, MAX_RANGE_DAYS, type SearchAnalytics } from '../../core/search/search-analytics.ts';
import { authGuard, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG7ErrorHandler, G7ErrorWire } from './errors.ts';

/**
 * `GET /api/v1/analytics/{search,access,stats}`: the figures @lanonasis/memory-client's getSearchAnalytics,
 * getAccessPatterns and getExtendedStats read (docs/api.md, "G7 — /api/v1/analytics/{search,access,stats}"). Unlike the spec's
 * report (tenant + mode, every workspace), these are of the caller's workspace (`X-Workspace-ID`), like the client's
 * other calls. Bare objects (the client reads them so); errors in G7's envelope. Registered with prefix `/api/v1/analytics`.
 */
export interface G7ClientDeps extends AuthDeps {
  memories: Pick<MemoryService, 'usage'>;
  searchAnalytics: SearchAnalytics;
  clock: Clock;
}

const DAY_MS = 86_400_000;
const TOP = 10;
const Range = Type.Object({
  from: Type.Optional(Type.String({ description: 'ISO 8601; default 30 days before `to`' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601; default now' })),
  group_by: Type.Enum(['day', 'week', 'month'], { default: 'day' }),
}, { additionalProperties: true });
const Loose = Type.Object({}, { additionalProperties: true });
const errors = { 400: G7ErrorWire, 401: G7ErrorWire, 403: G7ErrorWire, 429: G7ErrorWire };

function rangeOf(q: { from?: string | undefined; to?: string | undefined }, now: Date): { from: Date; to: Date } {
  const problems: FieldProblem[] = [];
  const parse = (raw: string | undefined, field: string): Date | undefined => {
    if (raw === undefined) return undefined;
    const t = Date.parse(raw);
    if (Number.isNaN(t)) problems.push({ field, reason: 'invalid_format', message: 'must be an ISO 8601 date or date-time' });
    return Number.isNaN(t) ? undefined : new Date(t);
  };
  const to = parse(q.to, 'to') ?? now;
  const from = parse(q.from, 'from') ?? new Date(to.getTime() - 30 * DAY_MS);
  if (problems.length === 0 && from >= to) problems.push({ field: 'from', reason: 'invalid_value', message: 'must be before to' });
  if (problems.length === 0 && to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    problems.push({ field: 'to', reason: 'invalid_value', message: `must be at most ${MAX_RANGE_DAYS} days after from` });
  }
  if (problems.length > 0) throw new DomainError('VALIDATION_FAILED', 'Invalid request', { fields: problems });
  return { from, to };
}

export const g7ClientAnalyticsRoutes: FastifyPluginAsync<G7ClientDeps> = async (app, deps) => {
  app.setErrorHandler(createG7ErrorHandler(deps.clock));
  app.addHook('onRequest', authGuard(deps, 'bearer'));
  const tags = ['G7 analytics'];
  const security = [{ bearer: [] }];

  app.get<{ Querystring: { from?: string; to?: string; group_by: 'day' | 'week' | 'month' } }>('/search', {
    config: { operation: 'analytics.read' },
    schema: { tags, security, summary: 'Search figures of the workspace (for @lanonasis/memory-client)', querystring: Range, response: { 200: Loose, ...errors } },
  }, async (req) => {
    const scope = scopeOf(req);
    const { from, to } = rangeOf(req.query, deps.clock.now());
    const granularity = req.query.group_by;
    if (bucketCount(from, to, granularity) > MAX_BUCKETS) {
      throw new DomainError('VALIDATION_FAILED', 'Invalid request', { fields: [{ field: 'group_by', reason: 'invalid_value', message: 'too many buckets for this range' }] });
    }
    const r = await deps.searchAnalytics.report(scope, { from, to, granularity });
    return {
      total_searches: r.totalSearches,
      unique_queries: r.uniqueQueries,
      avg_results_count: r.avgResults ?? 0,
      avg_execution_time_ms: r.avgExecutionMs ?? 0,
      zero_result_searches: r.zeroResultSearches,
      by_date: r.trend.map((b) => ({ date: isoTimestamp(b.start), searches: b.searches, avg_time_ms: b.avgExecutionMs ?? 0 })),
      popular_queries: r.topQueries.map((q) => ({ query: q.query, count: q.count, avg_similarity_score: q.avgScore })),
      period: { from: isoTimestamp(from), to: isoTimestamp(to), group_by: granularity },
    };
  });

  app.get<{ Querystring: { from?: string; to?: string } }>('/access', {
    config: { operation: 'analytics.read' },
    schema: { tags, security, summary: 'Most read memories of the workspace (for @lanonasis/memory-client)', querystring: Range, response: { 200: Loose, ...errors } },
  }, async (req) => {
    const scope = scopeOf(req);
    rangeOf(req.query, deps.clock.now()); // checked; access counts are kept per memory, not per time (docs/api.md)
    const u = await deps.memories.usage(scope, { since: deps.clock.now(), top: TOP });
    return {
      total_accesses: u.totalAccesses,
      most_accessed: u.mostAccessed.map((m) => ({
        memory_id: m.clientId ?? `mem_${m.id}`, title: m.title, access_count: m.accessCount,
        last_accessed: m.lastAccessed ? isoTimestamp(m.lastAccessed) : null,
      })),
    };
  });

  app.get('/stats', {
    config: { operation: 'analytics.read' },
    schema: { tags, security, summary: 'Sizes, activity and tags of the workspace (for @lanonasis/memory-client)', response: { 200: Loose, ...errors } },
  }, async (req) => {
    const scope = scopeOf(req);
    const now = deps.clock.now();
    const today = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
    const [u, searches] = await Promise.all([
      deps.memories.usage(scope, { since: today, top: TOP }),
      deps.searchAnalytics.report(scope, { from: today, to: new Date(now.getTime() + 1), granularity: 'day' }),
    ]);
    return {
      total_memories: u.total,
      by_type: u.byType,
      storage: {
        total_size_mb: Math.round((u.bytes / (1024 * 1024)) * 1e4) / 1e4,
        avg_memory_size_kb: u.total > 0 ? Math.round((u.bytes / u.total / 1024) * 1e3) / 1e3 : 0,
      },
      activity: { created_today: u.createdSince, updated_today: u.updatedSince, searched_today: searches.totalSearches },
      top_tags: u.topTags,
    };
  });
};
