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

/** Storage port of the request measurements (G7 analytics). */
export interface RequestMetricsRepository {
  /** Stores the rows of one flush in one write. */
  append(rows: readonly RequestMetricRow[]): Promise<void>;
  /** The tenant + mode's rows whose minute is in [from, to), oldest first. */
  list(tenantId: string, mode: string, from: Date, to: Date): Promise<RequestMetricRow[]>;
  /** Deletes rows of minutes before `before`; returns how many. */
  prune(before: Date): Promise<number>;
}
