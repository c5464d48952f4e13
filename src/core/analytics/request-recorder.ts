import type { Clock } from '../clock.ts';
import { addLatency } from './latency-histogram.ts';
import type { RequestMetricRow, RequestMetricsRepository } from './request-metrics.repository.ts';

/** One answered request, as the server's `onResponse` hook sees it. */
export interface AnsweredRequest {
  tenantId: string | null;
  mode: string | null;
  keyId: string | null;
  userId: string | null;
  surface: string;
  route: string;
  status: number;
  /**
   * Arrival to the end of the answer; null for a stream (SSE, WebSocket), whose duration is no response time: it
   * counts as a request but not in latencies (a histogram's total is the number of timed requests).
   */
  latencyMs: number | null;
  bytesIn: number;
  bytesOut: number;
}

export const MINUTE_MS = 60_000;
/** How often the aggregates are written (one write per flush). */
export const DEFAULT_FLUSH_INTERVAL_MS = 5000;
/**
 * At most this many distinct aggregates wait for a flush: past it, further new combinations are folded into their
 * tenant's `(overflow)` route for that minute, so memory stays bounded whatever the traffic (about 1 KB each).
 */
export const DEFAULT_MAX_PENDING = 20_000;
/** The route that new combinations fold into once `maxPending` aggregates wait. */
const OVERFLOW_ROUTE = '(overflow)';
/** Minute rows are kept this long (the longest timeframe G7 answers), then pruned. */
export const REQUEST_METRICS_RETENTION_MS = 90 * 24 * 3_600_000;

export type RequestRecorder = ReturnType<typeof createRequestRecorder>;

/**
 * Aggregates answered requests in memory per (tenant, mode, surface, route, status class, key, user, minute) and
 * writes them to the store every `flushIntervalMs` in one write. record() only updates a map, so the request's
 * critical path never waits for storage; a failed flush is reported and its rows dropped (measurements are
 * best-effort, and keeping them would let a broken store grow memory without bound).
 */
export function createRequestRecorder(deps: {
  metrics: Pick<RequestMetricsRepository, 'append'>;
  clock: Clock;
  flushIntervalMs?: number;
  maxPending?: number;
  onError?: (error: unknown) => void;
}) {
  const maxPending = deps.maxPending ?? DEFAULT_MAX_PENDING;
  let pending = new Map<string, RequestMetricRow>();
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();

  function record(r: AnsweredRequest): void {
    const minuteMs = Math.floor(deps.clock.now().getTime() / MINUTE_MS) * MINUTE_MS;
    const statusClass = Math.min(5, Math.max(1, Math.floor(r.status / 100)));
    const tenantId = r.tenantId ?? '';
    const mode = r.mode ?? '';
    // A plain joined key: this runs once per answered request, and JSON.stringify of an array costs several times more.
    const prefix = `${tenantId}\u0001${mode}\u0001${minuteMs}\u0001${r.surface}\u0001${statusClass}\u0001`;
    let key = `${prefix}${r.route}\u0001${r.keyId ?? ''}\u0001${r.userId ?? ''}`;
    let row = pending.get(key);
    let folded = false;
    if (!row && pending.size >= maxPending) {
      folded = true;
      key = `${prefix}${OVERFLOW_ROUTE}\u0001\u0001`;
      row = pending.get(key);
    }
    if (!row) {
      row = {
        tenantId, mode, minute: new Date(minuteMs), surface: r.surface, route: folded ? OVERFLOW_ROUTE : r.route, statusClass,
        keyId: folded ? '' : r.keyId ?? '', userId: folded ? '' : r.userId ?? '',
        requests: 0, latencySumMs: 0, latencyMaxMs: 0, histogram: {}, bytesIn: 0, bytesOut: 0,
      };
      pending.set(key, row);
    }
    row.requests += 1;
    if (r.latencyMs !== null) {
      const latency = Math.max(0, r.latencyMs);
      row.latencySumMs += latency;
      row.latencyMaxMs = Math.max(row.latencyMaxMs, latency);
      addLatency(row.histogram, latency);
    }
    row.bytesIn += Math.max(0, r.bytesIn);
    row.bytesOut += Math.max(0, r.bytesOut);
  }

  /** Writes what is pending (one write); flushes run one after another. */
  function flush(): Promise<void> {
    flushing = flushing.then(async () => {
      if (pending.size === 0) return;
      const rows = [...pending.values()];
      pending = new Map();
      try {
        await deps.metrics.append(rows);
      } catch (err) {
        deps.onError?.(err);
      }
    });
    return flushing;
  }

  return {
    record,
    flush,
    /** Aggregates waiting for the next flush. */
    get pendingCount(): number { return pending.size; },
    start(): void {
      if (timer) return;
      timer = setInterval(() => void flush(), deps.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS);
      timer.unref();
    },
    /** Stops the timer and writes what is left (shutdown). */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await flush();
    },
  };
}
