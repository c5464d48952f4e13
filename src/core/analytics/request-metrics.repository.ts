import type { LatencyHistogram } from './latency-histogram.ts';

/**
 * Requests answered in one minute by one (tenant, mode, surface, route, status class, key, user), as flushed by one
 * process: several rows may share those fields (each flush and each node writes its own), and readers add them up.
 * Unauthenticated requests have empty tenant, mode, key and user (no tenant ever reads them).
 */
export interface RequestMetricRow {
  tenantId: string;
  mode: string;
  /** The start of the minute (UTC). */
  minute: Date;
  /** `g1` … `g11`, or `other` (health, docs, unknown paths). */
  surface: string;
  /** Method and route pattern, e.g. `GET /api/v1/memories/:id`; `(unmatched)` for a path without a route. */
  route: string;
  /** 2, 3, 4 or 5 (the status's hundreds). */
  statusClass: number;
  keyId: string;
  userId: string;
  requests: number;
  latencySumMs: number;
  latencyMaxMs: number;
  histogram: LatencyHistogram;
  bytesIn: number;
  bytesOut: number;
}

/** One minute of a tenant + mode's requests, every row of it added up by the store. */
export interface RequestMinute {
  minute: Date;
  requests: number;
  /** Answered with a status of 400 or more. */
  errors: number;
  /** Answered 5xx. */
  serverErrors: number;
  latencySumMs: number;
  histogram: LatencyHistogram;
}

/** Storage port of the request measurements (G7 analytics). */
export interface RequestMetricsRepository {
  /** Stores the rows of one flush in one write. */
  append(rows: readonly RequestMetricRow[]): Promise<void>;
  /**
   * The tenant + mode's minutes in [from, to) that had requests, oldest first, summed by the store (so a report
   * reads one row per minute whatever the number of routes, keys, users and flushes).
   */
  minutes(tenantId: string, mode: string, from: Date, to: Date): Promise<RequestMinute[]>;
  /** Distinct users (non-empty user ids) with requests in [from, to). */
  activeUsers(tenantId: string, mode: string, from: Date, to: Date): Promise<number>;
  /** The tenant + mode's rows whose minute is in [from, to), oldest first. */
  list(tenantId: string, mode: string, from: Date, to: Date): Promise<RequestMetricRow[]>;
  /** Deletes rows of minutes before `before`; returns how many. */
  prune(before: Date): Promise<number>;
}
