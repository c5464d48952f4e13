import type { RequestMetricRow, RequestMetricsRepository } from '../../../core/analytics/request-metrics.repository.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface Row {
  tenant_id: string; mode: string; minute: number; surface: string; route: string; status_class: number; key_id: string;
  user_id: string; requests: number; latency_sum_ms: number; latency_max_ms: number; histogram: string; bytes_in: number;
  bytes_out: number;
}

export function createSqliteRequestMetricsRepository(db: SqliteDb): RequestMetricsRepository {
  const insert = db.prepare(`INSERT INTO request_metrics (tenant_id, mode, minute, surface, route, status_class, key_id,
    user_id, requests, latency_sum_ms, latency_max_ms, histogram, bytes_in, bytes_out)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const list = db.prepare<[string, string, number, number], Row>(
    `SELECT * FROM request_metrics WHERE tenant_id = ? AND mode = ? AND minute >= ? AND minute < ? ORDER BY minute, id`);
  const prune = db.prepare<[number]>('DELETE FROM request_metrics WHERE minute < ?');
  const appendAll = db.transaction((rows: readonly RequestMetricRow[]) => {
    for (const r of rows) {
      insert.run(r.tenantId, r.mode, r.minute.getTime(), r.surface, r.route, r.statusClass, r.keyId, r.userId, r.requests,
        r.latencySumMs, r.latencyMaxMs, JSON.stringify(r.histogram), r.bytesIn, r.bytesOut);
    }
  });

  return {
    async append(rows) {
      if (rows.length > 0) appendAll.immediate(rows);
    },
    async list(tenantId, mode, from, to) {
      return list.all(tenantId, mode, from.getTime(), to.getTime()).map((r): RequestMetricRow => ({
        tenantId: r.tenant_id, mode: r.mode, minute: new Date(r.minute), surface: r.surface, route: r.route,
        statusClass: r.status_class, keyId: r.key_id, userId: r.user_id, requests: r.requests, latencySumMs: r.latency_sum_ms,
        latencyMaxMs: r.latency_max_ms, histogram: JSON.parse(r.histogram) as Record<string, number>, bytesIn: r.bytes_in,
        bytesOut: r.bytes_out,
      }));
    },
    async prune(before) {
      return prune.run(before.getTime()).changes;
    },
  };
}
