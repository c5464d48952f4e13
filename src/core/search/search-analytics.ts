import type { Scope } from '../scope.ts';
import type { SearchLogRepository, SearchStats, TimeSlice, ZeroResultQuery } from './search-log.ts';

/**
 * Search analytics (G4 `GET /v1/analytics/search`): what the search log says about one scope's searches in a time
 * range, with a trend cut into calendar buckets. Every surface's searches count (G1, G3, G4 semantic and vector,
 * G6 search operations): they all go through the search service, which logs each one.
 */

export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The longest range one report covers. */
export const MAX_RANGE_DAYS = 366;
/** The most trend buckets one report holds (31 days of hours): a longer hourly range must be asked for by day. */
export const MAX_BUCKETS = 744;
/** How many of the most searched queries a report lists. */
export const TOP_QUERIES = 10;
/** How many of the queries that found nothing most often a list shows. */
export const ZERO_RESULT_QUERIES = 15;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The start of the bucket holding `at`, in UTC (which has no daylight-saving jumps): the hour, the midnight, the
 * Monday midnight (ISO 8601 weeks), the first of the month.
 */
export function bucketStart(at: Date, granularity: Granularity): Date {
  const t = at.getTime();
  switch (granularity) {
    case 'hour': return new Date(t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS));
    case 'day': return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
    case 'week': {
      const sinceMonday = (at.getUTCDay() + 6) % 7;
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() - sinceMonday));
    }
    case 'month': return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  }
}

/** The start of the bucket after the one starting at `start`. */
function nextBucket(start: Date, granularity: Granularity): Date {
  switch (granularity) {
    case 'hour': return new Date(start.getTime() + HOUR_MS);
    case 'day': return new Date(start.getTime() + DAY_MS);
    case 'week': return new Date(start.getTime() + 7 * DAY_MS);
    case 'month': return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}

/**
 * The calendar buckets covering `[from, to)`: the first starts at or before `from` (a range need not start on a
 * boundary), the last is the one holding the instant just before `to`. Each counts only searches inside the range.
 */
export function bucketsOf(from: Date, to: Date, granularity: Granularity): TimeSlice[] {
  const slices: TimeSlice[] = [];
  for (let start = bucketStart(from, granularity); start < to; start = nextBucket(start, granularity)) {
    slices.push({ start, end: nextBucket(start, granularity) });
  }
  return slices;
}

/** How many buckets `bucketsOf` would give, without building them (the route refuses a range with too many). */
export function bucketCount(from: Date, to: Date, granularity: Granularity): number {
  if (to <= from) return 0;
  const first = bucketStart(from, granularity).getTime();
  switch (granularity) {
    case 'hour': return Math.ceil((to.getTime() - first) / HOUR_MS);
    case 'day': return Math.ceil((to.getTime() - first) / DAY_MS);
    case 'week': return Math.ceil((to.getTime() - first) / (7 * DAY_MS));
    case 'month': {
      const last = bucketStart(new Date(to.getTime() - 1), 'month');
      return (last.getUTCFullYear() - from.getUTCFullYear()) * 12 + last.getUTCMonth() - from.getUTCMonth() + 1;
    }
  }
}

export interface SearchReportRequest {
  from: Date;
  to: Date;
  granularity: Granularity;
}

export interface SearchReport extends Omit<SearchStats, 'buckets'> {
  trend: { start: Date; searches: number; avgExecutionMs: number | null }[];
}

export function createSearchAnalytics(deps: { searchLog: Pick<SearchLogRepository, 'stats' | 'zeroResultQueries'> }) {
  return {
    /** The report of one scope (tenant, mode and workspace) over `[from, to)`; the route has checked the range. */
    async report(scope: Scope, request: SearchReportRequest): Promise<SearchReport> {
      const buckets = bucketsOf(request.from, request.to, request.granularity);
      const stats = await deps.searchLog.stats({ scope, from: request.from, to: request.to, buckets, topLimit: TOP_QUERIES });
      const { buckets: counted, ...totals } = stats;
      return {
        ...totals,
        trend: buckets.map((b, i) => ({
          start: b.start, searches: counted[i]?.searches ?? 0, avgExecutionMs: counted[i]?.avgExecutionMs ?? null,
        })),
      };
    },
    /** The queries of one scope that found nothing most often over `[from, to)` (the dashboard lists them; G4 and G7 do not). */
    async zeroResultQueries(scope: Scope, range: { from: Date; to: Date }): Promise<ZeroResultQuery[]> {
      return deps.searchLog.zeroResultQueries({ scope, from: range.from, to: range.to, limit: ZERO_RESULT_QUERIES });
    },
  };
}

export type SearchAnalytics = ReturnType<typeof createSearchAnalytics>;
