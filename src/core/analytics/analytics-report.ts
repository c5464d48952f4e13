import type { Clock } from '../clock.ts';
import type { KeyMode } from '../scope.ts';
import { costOf, projectedMonthlyCost, type CostBreakdown, type UnitPrices } from './cost-model.ts';
import { histogramCount, mergeHistogram, percentile, type LatencyHistogram } from './latency-histogram.ts';
import type { RequestMetricsRepository } from './request-metrics.repository.ts';
import { bucketIndex, type ReportWindow } from './report-window.ts';
import type { UsageRepository } from './usage.repository.ts';

export interface ResponseTimes { avg: number | null; p50: number | null; p95: number | null; p99: number | null }

export interface TimeSeriesPoint {
  timestamp: Date;
  /** Requests answered in the bucket (not in the spec's series: the G7 surface leaves it out; the dashboard charts it). */
  requests: number;
  memory_operations: number;
  search_queries: number;
  response_times: ResponseTimes;
  errors: number;
  cost: number;
}

/** The G7 report of one tenant + mode (every workspace) over a window; the surface picks the fields asked for. */
export interface AnalyticsReport {
  summary: {
    total_memories: number;
    total_searches: number;
    total_operations: number;
    active_users: number;
    avg_response_time: number | null;
    success_rate: number;
    cost_this_period: number;
    /** Not in the spec's summary: shown only when the `api_calls` metric is asked for. */
    api_calls: number;
    /** Not in the spec's summary (the dashboard shows them): ingestion's model tokens (prompt + completion) and calls. */
    llm_tokens: number;
    model_calls: number;
  };
  time_series: TimeSeriesPoint[];
  /** Not in the spec (the dashboard shows it): the response-time percentiles of the whole period. */
  response_times: ResponseTimes;
  top_queries: { query: string; count: number; avg_response_time: number }[];
  memory_usage: { total_size_mb: number; growth_rate: number | null; top_categories: { category: string; size_mb: number; percentage: number }[] };
  performance: { uptime_percentage: number; avg_throughput: number; peak_throughput: number; error_rate: number };
  /**
   * projected_cost is not in the spec's cost_breakdown: shown only when the `projected_cost` metric is asked for. llm
   * is not in it either, but total includes it, so it is shown wherever the other lines are.
   */
  cost_breakdown: CostBreakdown & { projected_cost: number };
}

/** The routes of a tenant and mode that answered errors in a period, with how many (the dashboard's "errors by route"). */
export interface RouteErrors { surface: string; route: string; requests: number; clientErrors: number; serverErrors: number }

export const TOP_QUERIES = 10;
export const TOP_ERROR_ROUTES = 20;
export const TOP_CATEGORIES = 10;
const MB = 1024 * 1024;
const MINUTE_MS = 60_000;

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
const ms2 = (x: number | null): number | null => (x === null ? null : round(x, 2));

export type AnalyticsReportService = ReturnType<typeof createAnalyticsReport>;

/**
 * Builds G7 reports from the request measurements (latency, errors, throughput, users, API calls), the search log
 * (searches, top queries), the event log (memory operations: only as far back as events are kept), the memories
 * themselves (counts and sizes) and the finished ingestion jobs (model calls and tokens). Every figure is the caller's
 * tenant + mode only.
 */
export function createAnalyticsReport(deps: {
  usage: UsageRepository;
  metrics: Pick<RequestMetricsRepository, 'minutes' | 'activeUsers' | 'list'>;
  prices: UnitPrices;
  clock: Clock;
}) {
  return {
    /** The unit prices the costs are computed with (MNEMO_COST_*). */
    prices: deps.prices,

    async report(tenantId: string, mode: KeyMode, w: ReportWindow): Promise<AnalyticsReport> {
      // Request rows are whole minutes: the one holding `from` counts.
      const fromMinute = new Date(Math.floor(w.from.getTime() / MINUTE_MS) * MINUTE_MS);
      const [minutes, activeUsers, searches, operations, top, storage, llm] = await Promise.all([
        deps.metrics.minutes(tenantId, mode, fromMinute, w.to),
        deps.metrics.activeUsers(tenantId, mode, fromMinute, w.to),
        deps.usage.searchesPerMinute(tenantId, mode, w.from, w.to),
        deps.usage.operationsPerMinute(tenantId, mode, w.from, w.to),
        deps.usage.topQueries(tenantId, mode, w.from, w.to, TOP_QUERIES),
        deps.usage.memoryStorage(tenantId, mode, w.from),
        deps.usage.llmUsagePerMinute(tenantId, mode, w.from, w.to),
      ]);
      const periodMs = Math.max(0, w.to.getTime() - w.from.getTime());
      const storedBytes = storage.reduce((s, t) => s + t.bytes, 0);

      const n = w.buckets.length;
      const perBucket = w.buckets.map(() => ({ requests: 0, errors: 0, latencyMs: 0, histogram: {} as LatencyHistogram, ops: 0, searches: 0, llmTokens: 0 }));
      const total = { requests: 0, errors: 0, latencyMs: 0, timed: 0, llmTokens: 0, modelCalls: 0 };
      const periodHistogram: LatencyHistogram = {};
      for (const m of minutes) {
        const i = bucketIndex(w, m.minute);
        if (i < 0) continue;
        const b = perBucket[i]!;
        b.requests += m.requests;
        b.errors += m.errors;
        b.latencyMs += m.latencySumMs;
        mergeHistogram(b.histogram, m.histogram);
        mergeHistogram(periodHistogram, m.histogram);
        total.requests += m.requests;
        total.errors += m.errors;
        total.latencyMs += m.latencySumMs;
        total.timed += histogramCount(m.histogram);
      }
      for (const s of searches) {
        const i = bucketIndex(w, s.minute);
        if (i >= 0) perBucket[i]!.searches += s.count;
      }
      for (const o of operations) {
        const i = bucketIndex(w, o.minute);
        if (i >= 0) perBucket[i]!.ops += o.count;
      }
      for (const u of llm) {
        const i = bucketIndex(w, u.minute);
        if (i < 0) continue;
        perBucket[i]!.llmTokens += u.promptTokens + u.completionTokens;
        total.llmTokens += u.promptTokens + u.completionTokens;
        total.modelCalls += u.modelCalls;
      }

      const cost = costOf(deps.prices, { storedBytes, periodMs, latencyMs: total.latencyMs, requests: total.requests, llmTokens: total.llmTokens });
      const time_series = w.buckets.map((start, i): TimeSeriesPoint => {
        const b = perBucket[i]!;
        // A bucket's share of the period: the first and last may be cut by the window's ends.
        const end = i + 1 < n ? w.buckets[i + 1]!.getTime() : w.to.getTime();
        const bucketMs = Math.max(0, Math.min(end, w.to.getTime()) - Math.max(start.getTime(), w.from.getTime()));
        return {
          timestamp: start,
          requests: b.requests,
          memory_operations: b.ops,
          search_queries: b.searches,
          response_times: responseTimes(b.latencyMs, b.histogram),
          errors: b.errors,
          cost: costOf(deps.prices, { storedBytes, periodMs: bucketMs, latencyMs: b.latencyMs, requests: b.requests, llmTokens: b.llmTokens }).total,
        };
      });

      const periodMinutes = Math.max(1, Math.ceil(periodMs / MINUTE_MS));
      const failedMinutes = minutes.filter((m) => m.serverErrors > 0 && bucketIndex(w, m.minute) >= 0).length;
      const bytesBefore = storage.reduce((s, t) => s + t.bytes - t.bytesSince, 0);
      const bytesAdded = storage.reduce((s, t) => s + t.bytesSince, 0);
      return {
        summary: {
          total_memories: storage.reduce((s, t) => s + t.count, 0),
          total_searches: perBucket.reduce((s, b) => s + b.searches, 0),
          total_operations: perBucket.reduce((s, b) => s + b.ops, 0),
          active_users: activeUsers,
          avg_response_time: total.timed > 0 ? ms2(total.latencyMs / total.timed) : null,
          success_rate: total.requests > 0 ? round(1 - total.errors / total.requests, 4) : 1,
          cost_this_period: cost.total,
          api_calls: total.requests,
          llm_tokens: total.llmTokens,
          model_calls: total.modelCalls,
        },
        time_series,
        response_times: responseTimes(total.latencyMs, periodHistogram),
        top_queries: top.map((q) => ({ query: q.query, count: q.count, avg_response_time: round(q.avgMs, 2) })),
        memory_usage: {
          total_size_mb: round(storedBytes / MB, 4),
          // Growth of the stored size over the period, in percent of the size at its start (null: nothing before).
          growth_rate: bytesBefore > 0 ? round((bytesAdded / bytesBefore) * 100, 2) : bytesAdded > 0 ? null : 0,
          top_categories: storage.slice(0, TOP_CATEGORIES).map((t) => ({
            category: t.memoryType,
            size_mb: round(t.bytes / MB, 4),
            percentage: storedBytes > 0 ? round((t.bytes / storedBytes) * 100, 2) : 0,
          })),
        },
        performance: {
          uptime_percentage: round(((periodMinutes - Math.min(periodMinutes, failedMinutes)) / periodMinutes) * 100, 2),
          avg_throughput: round(total.requests / periodMinutes, 2),
          peak_throughput: minutes.reduce((peak, m) => (bucketIndex(w, m.minute) >= 0 ? Math.max(peak, m.requests) : peak), 0),
          error_rate: total.requests > 0 ? round(total.errors / total.requests, 4) : 0,
        },
        cost_breakdown: { ...cost, projected_cost: projectedMonthlyCost(cost.total, periodMs) },
      };
    },

    /**
     * The routes that answered 4xx or 5xx in the window, most errors first (at most TOP_ERROR_ROUTES). It adds up
     * the window's request rows, one per (minute, route, status class, key, user, flush): a long window of a busy
     * tenant reads many.
     */
    async errorsByRoute(tenantId: string, mode: KeyMode, w: ReportWindow): Promise<RouteErrors[]> {
      const fromMinute = new Date(Math.floor(w.from.getTime() / MINUTE_MS) * MINUTE_MS);
      const byRoute = new Map<string, RouteErrors>();
      for (const row of await deps.metrics.list(tenantId, mode, fromMinute, w.to)) {
        const key = `${row.surface} ${row.route}`;
        const r = byRoute.get(key) ?? { surface: row.surface, route: row.route, requests: 0, clientErrors: 0, serverErrors: 0 };
        r.requests += row.requests;
        if (row.statusClass === 4) r.clientErrors += row.requests;
        if (row.statusClass === 5) r.serverErrors += row.requests;
        byRoute.set(key, r);
      }
      return [...byRoute.values()].filter((r) => r.clientErrors + r.serverErrors > 0)
        .sort((a, b) => b.clientErrors + b.serverErrors - (a.clientErrors + a.serverErrors) || a.route.localeCompare(b.route))
        .slice(0, TOP_ERROR_ROUTES);
    },
  };
}

/** Over the timed requests (streams are counted as requests but have no response time). */
function responseTimes(latencyMs: number, h: LatencyHistogram): ResponseTimes {
  const requests = histogramCount(h);
  if (requests === 0) return { avg: null, p50: null, p95: null, p99: null };
  return { avg: ms2(latencyMs / requests), p50: ms2(percentile(h, 50)), p95: ms2(percentile(h, 95)), p99: ms2(percentile(h, 99)) };
}
