import { stringify } from 'csv-stringify/sync';
import type { AnalyticsReport, TimeSeriesPoint } from '../../core/analytics/analytics-report.ts';
import { isoTimestamp } from '../../core/clock.ts';
import type { MetricName } from './requests.ts';

type Wire = Record<string, unknown>;

/** Keeps the fields whose metric is selected (`null`: all of the spec's fields); drops an object left empty. */
function pick(fields: [name: string, metric: MetricName | MetricName[], value: unknown][], metrics: ReadonlySet<MetricName> | null): Wire | undefined {
  const out: Wire = {};
  for (const [name, metric, value] of fields) {
    const names = Array.isArray(metric) ? metric : [metric];
    if (metrics === null || names.some((m) => metrics.has(m))) out[name] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The time-series fields and the metric each belongs to (timestamp is always there). */
const SERIES_FIELDS: [name: keyof TimeSeriesPoint, metric: MetricName][] = [
  ['memory_operations', 'memory_operations'], ['search_queries', 'search_queries'], ['response_times', 'response_times'],
  ['errors', 'error_rate'], ['cost', 'cost_this_period'],
];

/**
 * `data` of the G7 answer. Without `metrics` it is the spec's shape, plus `cost_breakdown.llm` when the period had a
 * model's cost (it is in `total`: a total its lines do not add up to would mislead). With `metrics`, each object keeps the fields of the
 * named metrics and a section with none of them is left out; two fields the spec's response has no place for appear
 * only when named: `summary.api_calls` (api_calls) and `cost_breakdown.projected_cost` (projected_cost).
 */
export function toAnalyticsData(r: AnalyticsReport, metrics: ReadonlySet<MetricName> | null): Wire {
  const named = (m: MetricName): boolean => metrics !== null && metrics.has(m);
  const summary = pick([
    ['total_memories', 'total_memories', r.summary.total_memories],
    ['total_searches', 'search_queries', r.summary.total_searches],
    ['total_operations', 'memory_operations', r.summary.total_operations],
    ['active_users', 'active_users', r.summary.active_users],
    ['avg_response_time', 'response_times', r.summary.avg_response_time],
    ['success_rate', 'error_rate', r.summary.success_rate],
    ['cost_this_period', 'cost_this_period', r.summary.cost_this_period],
  ], metrics);
  const seriesWanted = metrics === null || SERIES_FIELDS.some(([, m]) => metrics.has(m));
  const costBreakdown = pick([
    ['storage', 'cost_breakdown', r.cost_breakdown.storage], ['compute', 'cost_breakdown', r.cost_breakdown.compute],
    ['api_calls', 'cost_breakdown', r.cost_breakdown.api_calls], ['llm', 'cost_breakdown', r.cost_breakdown.llm],
    ['total', 'cost_breakdown', r.cost_breakdown.total],
  ], metrics) ?? {};
  // Only a period with a model's cost shows its line: without ingestion the answer is exactly the spec's shape.
  if (costBreakdown.llm === 0) delete costBreakdown.llm;
  if (named('projected_cost')) costBreakdown.projected_cost = r.cost_breakdown.projected_cost;
  const data: Wire = {
    summary: named('api_calls') ? { ...summary, api_calls: r.summary.api_calls } : summary,
    time_series: seriesWanted ? r.time_series.map((p) => ({
      timestamp: isoTimestamp(p.timestamp),
      ...pick(SERIES_FIELDS.map(([name, m]) => [name, m, p[name]]), metrics),
    })) : undefined,
    top_queries: metrics === null || metrics.has('search_queries') ? r.top_queries : undefined,
    memory_usage: metrics === null || metrics.has('storage_usage') ? r.memory_usage : undefined,
    performance: pick([
      ['uptime_percentage', ['throughput', 'api_calls'], r.performance.uptime_percentage],
      ['avg_throughput', ['throughput', 'api_calls'], r.performance.avg_throughput],
      ['peak_throughput', ['throughput', 'api_calls'], r.performance.peak_throughput],
      ['error_rate', 'error_rate', r.performance.error_rate],
    ], metrics),
    cost_breakdown: Object.keys(costBreakdown).length > 0 ? costBreakdown : undefined,
  };
  for (const k of Object.keys(data)) if (data[k] === undefined) delete data[k];
  return data;
}

/** The CSV columns: one row per time bucket; `metrics` keeps the columns of the named metrics (timestamp always). */
const CSV_COLUMNS: [header: string, metric: MetricName | null, value: (p: TimeSeriesPoint) => unknown][] = [
  ['timestamp', null, (p) => isoTimestamp(p.timestamp)],
  ['memory_operations', 'memory_operations', (p) => p.memory_operations],
  ['search_queries', 'search_queries', (p) => p.search_queries],
  ['response_time_avg_ms', 'response_times', (p) => p.response_times.avg],
  ['response_time_p50_ms', 'response_times', (p) => p.response_times.p50],
  ['response_time_p95_ms', 'response_times', (p) => p.response_times.p95],
  ['response_time_p99_ms', 'response_times', (p) => p.response_times.p99],
  ['errors', 'error_rate', (p) => p.errors],
  ['cost', 'cost_this_period', (p) => p.cost],
];

/**
 * The CSV answer (RFC 4180, CRLF line ends, a header row): the time series, one row per bucket, oldest first. An
 * empty cell is a null (a bucket without requests has no percentiles). Other sections are JSON-only.
 */
export function toAnalyticsCsv(r: AnalyticsReport, metrics: ReadonlySet<MetricName> | null): string {
  const columns = CSV_COLUMNS.filter(([, m]) => m === null || metrics === null || metrics.has(m));
  return stringify([
    columns.map(([h]) => h),
    ...r.time_series.map((p) => columns.map(([, , v]) => v(p) ?? '')),
  ], { record_delimiter: '\r\n' });
}
