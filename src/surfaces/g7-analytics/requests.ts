import { GROUP_BYS, TIMEFRAMES, rangeWindow, timeframeWindow, type BucketUnit, type ReportWindow, type Timeframe } from '../../core/analytics/report-window.ts';
import { G7HttpError } from './errors.ts';

/** The spec's metric names; `metrics=` picks among them (comma-separated, or repeated). */
export const METRIC_NAMES = [
  'memory_operations', 'search_queries', 'response_times', 'error_rate', 'throughput', 'total_memories', 'active_users',
  'storage_usage', 'api_calls', 'cost_this_period', 'cost_breakdown', 'projected_cost',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

export const DEFAULT_TIMEFRAME: Timeframe = '24h';
/** A date range spans at most this long (a year by the hour stays under the bucket cap). */
export const MAX_RANGE_MS = 366 * 24 * 3_600_000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export interface AnalyticsQuery {
  window: ReportWindow;
  /** `1h` … `90d`, or the ISO 8601 interval `start/end` of a date range. */
  label: string;
  /** null: every metric (the spec's full response). */
  metrics: ReadonlySet<MetricName> | null;
  format: 'json' | 'csv';
}

type Query = Record<string, unknown>;

const one = (q: Query, name: string): string | undefined => {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v.trim();
  throw invalid(name, 'given more than once', { reason: 'invalid_value' });
};

function invalid(field: string, message: string, details: Record<string, unknown>): G7HttpError {
  return new G7HttpError(400, 'VALIDATION_ERROR', `${field}: ${message}`, { field, ...details });
}

/** Date.parse rolls 2026-02-30 over into March: the day must exist in its month. */
function realCalendarDay(raw: string): boolean {
  const [y, m, d] = raw.slice(0, 10).split('-').map(Number) as [number, number, number];
  return m >= 1 && m <= 12 && d >= 1 && d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function date(q: Query, field: string): Date | undefined {
  let raw = one(q, field);
  if (raw === undefined || raw === '') return undefined;
  // An unencoded `+` of an offset arrives as a space; a date-time without an offset is UTC (not the server's zone).
  raw = raw.replace(/ (\d{2}:?\d{2})$/, '+$1');
  if (/T[\d:.]+$/.test(raw)) raw = `${raw}Z`;
  const t = ISO_DATE.test(raw) && realCalendarDay(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(t)) throw invalid(field, 'must be an ISO 8601 date or date-time', { reason: 'invalid_date' });
  return new Date(t);
}

/** Reads the query string (and Accept) of `GET /api/v1/analytics`; every problem is a 400 naming its field. */
export function parseAnalyticsQuery(q: Query, accept: string | undefined, now: Date): AnalyticsQuery {
  const timeframe = one(q, 'timeframe');
  if (timeframe !== undefined && !(TIMEFRAMES as readonly string[]).includes(timeframe)) {
    throw new G7HttpError(400, 'INVALID_TIMEFRAME', `timeframe must be one of ${TIMEFRAMES.join(', ')}`, { field: 'timeframe', valid_values: [...TIMEFRAMES] });
  }
  const groupBy = one(q, 'group_by');
  if (groupBy !== undefined && !(GROUP_BYS as readonly string[]).includes(groupBy)) {
    throw invalid('group_by', `must be one of ${GROUP_BYS.join(', ')}`, { valid_values: [...GROUP_BYS] });
  }
  const unit = groupBy as BucketUnit | undefined;
  const start = date(q, 'start_date');
  const end = date(q, 'end_date');

  let window: ReportWindow;
  let label: string;
  if (start || end) {
    if (timeframe !== undefined) throw invalid('timeframe', 'give either timeframe or start_date and end_date, not both', { reason: 'conflicts_with_dates' });
    if (!start) throw invalid('start_date', 'is required with end_date', { reason: 'missing_required_field' });
    if (!end) throw invalid('end_date', 'is required with start_date', { reason: 'missing_required_field' });
    if (end.getTime() <= start.getTime()) throw invalid('end_date', 'must be after start_date', { reason: 'end_before_start' });
    if (end.getTime() - start.getTime() > MAX_RANGE_MS) throw invalid('end_date', 'must be at most 366 days after start_date', { reason: 'range_too_long' });
    window = rangeWindow(start, end, unit ?? 'day');
    label = `${start.toISOString()}/${end.toISOString()}`;
  } else {
    const tf = (timeframe ?? DEFAULT_TIMEFRAME) as Timeframe;
    window = timeframeWindow(tf, now, unit);
    label = tf;
  }

  const metrics = parseMetrics(q.metrics);
  const format = one(q, 'format');
  if (format !== undefined && format !== 'json' && format !== 'csv') throw invalid('format', 'must be json or csv', { valid_values: ['json', 'csv'] });
  const wantsCsv = format === 'csv' || (format === undefined && /\b(application|text)\/csv\b/i.test(accept ?? ''));
  return { window, label, metrics, format: wantsCsv ? 'csv' : 'json' };
}

/** `metrics=a,b` or `metrics=a&metrics=b`; empty or absent: every metric. */
function parseMetrics(raw: unknown): ReadonlySet<MetricName> | null {
  if (raw === undefined) return null;
  const parts = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) return null;
  const unknown = parts.find((p) => !(METRIC_NAMES as readonly string[]).includes(p));
  if (unknown !== undefined) throw invalid('metrics', `unknown metric "${unknown.slice(0, 64)}"`, { valid_values: [...METRIC_NAMES] });
  return new Set(parts as MetricName[]);
}
