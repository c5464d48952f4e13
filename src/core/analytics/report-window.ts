/**
 * The time buckets of a G7 report. A timeframe ends now and uses the spec's bucket size (1h: 1 minute, 24h: 1 hour,
 * 7d and 30d: 1 day, 90d: 1 week); its buckets are aligned to UTC (minutes, hours, days, ISO weeks from Monday,
 * calendar months), the last one holding now (so it is partial), and there are as many as the timeframe spans
 * (60, 24, 7, 30, 13). A date range [start, end) is cut by `group_by` from the bucket holding start.
 */
export const TIMEFRAMES = ['1h', '24h', '7d', '30d', '90d'] as const;
export type Timeframe = (typeof TIMEFRAMES)[number];
export const GROUP_BYS = ['hour', 'day', 'week', 'month'] as const;
export type BucketUnit = 'minute' | (typeof GROUP_BYS)[number];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const TIMEFRAME_SPANS: Record<Timeframe, { unit: BucketUnit; buckets: number }> = {
  '1h': { unit: 'minute', buckets: 60 },
  '24h': { unit: 'hour', buckets: 24 },
  '7d': { unit: 'day', buckets: 7 },
  '30d': { unit: 'day', buckets: 30 },
  '90d': { unit: 'week', buckets: 13 },
};

/** At most this many buckets in one report (a year by the hour is 8,784). */
export const MAX_BUCKETS = 9000;

/** The start of the bucket holding `t`. */
export function bucketStart(t: number, unit: BucketUnit): number {
  switch (unit) {
    case 'minute': return Math.floor(t / MINUTE) * MINUTE;
    case 'hour': return Math.floor(t / HOUR) * HOUR;
    case 'day': return Math.floor(t / DAY) * DAY;
    case 'week': {
      const day = Math.floor(t / DAY) * DAY;
      const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0
      return day - weekday * DAY;
    }
    case 'month': {
      const d = new Date(t);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
  }
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucket(start: number, unit: BucketUnit): number {
  switch (unit) {
    case 'minute': return start + MINUTE;
    case 'hour': return start + HOUR;
    case 'day': return start + DAY;
    case 'week': return start + 7 * DAY;
    case 'month': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
  }
}

export interface ReportWindow {
  /** Bucket starts, oldest first. */
  buckets: Date[];
  unit: BucketUnit;
  /** The period reported: [from, to). */
  from: Date;
  to: Date;
}

/** The window of a timeframe ending at `now` (its last bucket holds now; `to` is just after now). */
export function timeframeWindow(timeframe: Timeframe, now: Date, unit?: BucketUnit): ReportWindow {
  const span = TIMEFRAME_SPANS[timeframe];
  const spanMs = { '1h': HOUR, '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY, '90d': 90 * DAY }[timeframe];
  if (unit && unit !== span.unit) return rangeWindow(new Date(now.getTime() - spanMs + 1), new Date(now.getTime() + 1), unit);
  const to = now.getTime() + 1;
  let start = bucketStart(now.getTime(), span.unit);
  for (let i = 1; i < span.buckets; i++) start = previousBucket(start, span.unit);
  return rangeWindow(new Date(start), new Date(to), span.unit);
}

function previousBucket(start: number, unit: BucketUnit): number {
  return bucketStart(start - 1, unit);
}

/** The window of [from, to) cut by `unit`; null when it would hold more than MAX_BUCKETS buckets. */
export function rangeWindow(from: Date, to: Date, unit: BucketUnit): ReportWindow {
  const buckets: Date[] = [];
  for (let t = bucketStart(from.getTime(), unit); t < to.getTime() && buckets.length <= MAX_BUCKETS; t = nextBucket(t, unit)) {
    buckets.push(new Date(t));
  }
  return { buckets, unit, from, to };
}

/** The index of the bucket holding `t` (a minute's start, or a time), or -1 outside the window. */
export function bucketIndex(w: ReportWindow, t: Date): number {
  const ms = t.getTime();
  // Figures are kept by the minute: the minute holding `from` belongs to the window.
  if (ms < bucketStart(w.from.getTime(), 'minute') || ms >= w.to.getTime()) return -1;
  const start = bucketStart(ms, w.unit);
  // Buckets are contiguous: binary search by start.
  let lo = 0;
  let hi = w.buckets.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const b = w.buckets[mid]!.getTime();
    if (b === start) return mid;
    if (b < start) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
