import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { FieldProblem } from '../../core/errors.ts';
import type { Scope } from '../../core/scope.ts';
import { parseTimestamp } from '../../core/search/filters.ts';
import {
  bucketCount, GRANULARITIES, MAX_BUCKETS, MAX_RANGE_DAYS, type Granularity, type SearchAnalytics, type SearchReport,
} from '../../core/search/search-analytics.ts';
import { authGuard, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { collectProblems, schemaProblems, throwIfAnyProblem } from '../http-kit/field-problems.ts';
import { createG4ErrorHandler } from './errors.ts';
import { roundMs, roundScore } from './mappers.ts';
import { ErrorWire, ok } from './schemas.ts';

export interface G4AnalyticsDeps extends AuthDeps {
  searchAnalytics: Pick<SearchAnalytics, 'report'>;
  clock: Clock;
}

const DAY_MS = 86_400_000;
/** The range when start_date is not given: this long before end_date. */
export const DEFAULT_RANGE_DAYS = 7;

const ISO_DATE = 'an ISO 8601 date or date-time, e.g. 2026-01-31 or 2026-01-31T12:00:00Z';

export const AnalyticsQuery = Type.Object({
  start_date: Type.Optional(Type.String({ description: `Inclusive start, ${ISO_DATE}; default end_date minus 7 days` })),
  end_date: Type.Optional(Type.String({
    description: `Exclusive end, ${ISO_DATE}; a date alone means the end of that day (its whole day counts); default now`,
  })),
  granularity: Type.Optional(Type.Enum([...GRANULARITIES], {
    default: 'day', description: 'Trend buckets, on UTC calendar boundaries; weeks start on Monday (ISO 8601)',
  })),
});

const Nullable = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const AnalyticsResponse = ok(Type.Object({
  period: Type.Object({ start: Type.String(), end: Type.String(), granularity: Type.String() }),
  metrics: Type.Object({
    total_searches: Type.Integer(),
    unique_queries: Type.Integer({ description: 'Distinct query texts, compared without case and extra spaces; vector searches have none' }),
    avg_results_per_search: Nullable('Results returned per search (2 decimals); null without searches'),
    avg_query_time_ms: Nullable('Wall time per search, embedding included (2 decimals); null without searches'),
    zero_result_searches: Type.Integer(),
  }),
  top_queries: Type.Array(Type.Object({
    query: Type.String({ description: 'The normalised text: lower case, spaces collapsed' }),
    count: Type.Integer(),
    avg_similarity_score: Nullable('Mean similarity_score of the results of its searches that found any; null when none did'),
  }), { description: 'At most 10, most searched first (ties: alphabetical)' }),
  search_trends: Type.Array(Type.Object({
    date: Type.String({ description: 'Start of the bucket (UTC)' }),
    searches: Type.Integer(),
    avg_query_time_ms: Nullable('null when the bucket has no searches'),
  }), { description: 'Every bucket of the period, oldest first, empty ones included' }),
}));

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date parameter, or a problem on `field`. Everything is UTC: a date-time without an offset too (JavaScript
 * would read it in the server's time zone). A date alone as an end means the following midnight.
 */
function dateParam(value: unknown, field: string, asEnd: boolean, problems: FieldProblem[]): Date | undefined {
  if (typeof value !== 'string') return undefined; // absent, or a repeated parameter the schema reports
  const text = value.trim();
  const d = parseTimestamp(text);
  if (!d) {
    problems.push({ field, reason: 'invalid_format', message: `must be ${ISO_DATE}` });
    return undefined;
  }
  return asEnd && DATE_ONLY.test(text) ? new Date(d.getTime() + DAY_MS) : d;
}

/** The period asked for, with every problem of the dates and granularity reported at once. */
function periodOf(q: { start_date?: unknown; end_date?: unknown; granularity?: unknown }, now: Date, problems: FieldProblem[]) {
  // A granularity outside the list is the schema's to report; the dates are still checked.
  const known = q.granularity === undefined || (GRANULARITIES as readonly unknown[]).includes(q.granularity);
  const granularity = known ? (q.granularity as Granularity | undefined) ?? 'day' : 'day';
  const givenStart = dateParam(q.start_date, 'start_date', false, problems);
  const givenEnd = dateParam(q.end_date, 'end_date', true, problems);
  if ((q.start_date !== undefined && !givenStart) || (q.end_date !== undefined && !givenEnd)) return undefined;
  const end = givenEnd ?? now;
  const start = givenStart ?? new Date(end.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  if (start >= end) {
    problems.push({ field: 'start_date', reason: 'invalid_value', message: 'must be before end_date' });
  } else if (end.getTime() - start.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    problems.push({ field: 'end_date', reason: 'out_of_range', message: `must be at most ${MAX_RANGE_DAYS} days after start_date` });
  } else if (known && bucketCount(start, end, granularity) > MAX_BUCKETS) {
    problems.push({
      field: 'granularity', reason: 'out_of_range',
      message: `gives more than ${MAX_BUCKETS} buckets over this period; choose a coarser one or a shorter period`,
    });
  }
  return { start, end, granularity };
}

const round2 = (x: number | null) => (x === null ? null : Math.round(x * 100) / 100);
const ms = (x: number | null) => (x === null ? null : roundMs(x));

function toWire(period: { start: Date; end: Date; granularity: Granularity }, r: SearchReport) {
  return {
    period: { start: isoTimestamp(period.start), end: isoTimestamp(period.end), granularity: period.granularity },
    metrics: {
      total_searches: r.totalSearches,
      unique_queries: r.uniqueQueries,
      avg_results_per_search: round2(r.avgResults),
      avg_query_time_ms: ms(r.avgExecutionMs),
      zero_result_searches: r.zeroResultSearches,
    },
    top_queries: r.topQueries.map((q) => ({
      query: q.query, count: q.count, avg_similarity_score: q.avgScore === null ? null : roundScore(q.avgScore),
    })),
    search_trends: r.trend.map((b) => ({ date: isoTimestamp(b.start), searches: b.searches, avg_query_time_ms: ms(b.avgExecutionMs) })),
  };
}

/**
 * G4 `GET /v1/analytics/search`: the caller's searches (its tenant, mode and workspace, as G4 search itself) over a
 * period, with a trend. Registered without a prefix.
 */
export const g4AnalyticsRoutes: FastifyPluginAsync<G4AnalyticsDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG4ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'bearer'));

  r.get('/v1/analytics/search', {
    config: { operation: 'analytics.read' },
    schema: {
      tags: ['G4 search and discovery'], security: [{ bearer: [] }], summary: 'Search analytics: totals, top queries and a trend',
      description: 'Searches on every surface count (G1, G3, G4 including vector search, G6 search operations) in the caller\'s '
        + `workspace (X-Workspace-ID). The period is [start_date, end_date), at most ${MAX_RANGE_DAYS} days and ${MAX_BUCKETS} buckets.`,
      querystring: AnalyticsQuery,
      response: { 200: AnalyticsResponse, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 429: ErrorWire, 503: ErrorWire },
    },
    attachValidation: true,
  }, async (req) => {
    const problems = schemaProblems(req);
    const period = periodOf(req.query, deps.clock.now(), problems);
    const scope = collectProblems(problems, () => scopeOf(req));
    throwIfAnyProblem(problems);
    const chosen = period!;
    const report = await deps.searchAnalytics.report(scope as Scope, { from: chosen.start, to: chosen.end, granularity: chosen.granularity });
    return {
      success: true as const,
      data: toWire(chosen, report),
      meta: { timestamp: isoTimestamp(deps.clock.now()), request_id: req.id },
    };
  });
};
