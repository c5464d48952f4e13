import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { AnalyticsReportService } from '../../core/analytics/analytics-report.ts';
import { DEFAULT_FLUSH_INTERVAL_MS } from '../../core/analytics/request-recorder.ts';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import { authGuard, requirePrincipal, type AuthDeps } from '../http-kit/auth.ts';
import { createG7ErrorHandler, G7ErrorWire } from './errors.ts';
import { toAnalyticsCsv, toAnalyticsData } from './mappers.ts';
import { parseAnalyticsQuery } from './requests.ts';

export interface G7ReportDeps extends AuthDeps {
  analyticsReport: Pick<AnalyticsReportService, 'report'>;
  limits: Pick<LimitsService, 'gateway'>;
  clock: Clock;
}

/** Documentation only: every parameter is checked by parseAnalyticsQuery, so that each problem answers in G7's terms. */
const param = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description }));
const AnalyticsQueryString = Type.Object({
  timeframe: param('1h, 24h (default), 7d, 30d or 90d'),
  start_date: param('ISO 8601; with end_date instead of timeframe'),
  end_date: param('ISO 8601, after start_date, at most 366 days later'),
  metrics: param('metric names, comma-separated or repeated'),
  group_by: param('hour, day, week or month'),
  format: param('json or csv'),
}, { additionalProperties: true });

/**
 * G7: `GET /api/v1/analytics` (Bearer, `memories:read`): the caller's tenant + mode, every workspace. JSON in the
 * spec's shape with `metadata {timeframe, generated_at, next_update}`, or CSV (`format=csv`, `Accept:
 * application/csv`). Registered with prefix `/api/v1/analytics`.
 */
export const g7AnalyticsRoutes: FastifyPluginAsync<G7ReportDeps> = async (app, deps) => {
  app.setErrorHandler(createG7ErrorHandler(deps.clock));
  app.addHook('onRequest', authGuard(deps, 'bearer'));
  app.route({
    method: 'GET',
    url: '/',
    config: { operation: 'analytics.read' },
    schema: {
      tags: ['G7 analytics'],
      security: [{ bearer: [] }],
      summary: 'Usage analytics of the caller\'s tenant',
      description: 'Summary, time series, top queries, memory usage, performance and cost for a timeframe or a date range. '
        + '`format=csv` or `Accept: application/csv` answers the time series as CSV. See docs/api.md, "G7".',
      querystring: AnalyticsQueryString,
      response: { 400: G7ErrorWire, 401: G7ErrorWire, 403: G7ErrorWire, 429: G7ErrorWire },
    },
    handler: async (req, reply) => {
      const principal = requirePrincipal(req);
      const now = deps.clock.now();
      const accept = req.headers.accept;
      const q = parseAnalyticsQuery(req.query as Record<string, unknown>, accept, now);
      const report = await deps.analyticsReport.report(principal.tenantId, principal.mode, q.window);
      // Request figures are written every few seconds (search and memory figures are live): the next write is the
      // next change.
      const nextUpdate = new Date(now.getTime() + DEFAULT_FLUSH_INTERVAL_MS);
      if (q.format === 'csv') {
        return reply.type('application/csv; charset=utf-8').send(toAnalyticsCsv(report, q.metrics));
      }
      return reply.send({
        success: true,
        data: toAnalyticsData(report, q.metrics),
        metadata: { timeframe: q.label, generated_at: isoTimestamp(now), next_update: isoTimestamp(nextUpdate) },
      });
    },
  });
};
