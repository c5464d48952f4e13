import type { RequestMetricRow, RequestMetricsRepository, RequestMinute } from '../../../core/analytics/request-metrics.repository.ts';
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
  const scopeWindow = 'tenant_id = ? AND mode = ? AND minute >= ? AND minute < ?';
  const minuteTotals = db.prepare<[string, string, number, number], { minute: number; requests: number; errors: number; server_errors: number; latency: number }>(
    `SELECT minute, SUM(requests) AS requests,
       SUM(CASE WHEN status_class >= 4 THEN requests ELSE 0 END) AS errors,
       SUM(CASE WHEN status_class >= 5 THEN requests ELSE 0 END) AS server_errors,
       SUM(latency_sum_ms) AS latency
     FROM request_metrics WHERE ${scopeWindow} GROUP BY minute ORDER BY minute`);
  const minuteHistograms = db.prepare<[string, string, number, number], { minute: number; bucket: string; n: number }>(
    `SELECT m.minute AS minute, j.key AS bucket, SUM(j.value) AS n FROM request_metrics m, json_each(m.histogram) j
     WHERE m.tenant_id = ? AND m.mode = ? AND m.minute >= ? AND m.minute < ? GROUP BY m.minute, j.key`);
  const users = db.prepare<[string, string, number, number], number>(
    `SELECT COUNT(DISTINCT user_id) FROM request_metrics WHERE ${scopeWindow} AND user_id <> ''`).pluck();
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
    async minutes(tenantId, mode, from, to) {
      const args = [tenantId, mode, from.getTime(), to.getTime()] as const;
      const out = new Map<number, RequestMinute>();
      for (const r of minuteTotals.all(...args)) {
        out.set(r.minute, {
          minute: new Date(r.minute), requests: r.requests, errors: r.errors, serverErrors: r.server_errors, latencySumMs: r.latency, histogram: {},
        });
      }
      for (const h of minuteHistograms.all(...args)) {
        const m = out.get(h.minute);
        if (m) m.histogram[h.bucket] = h.n;
      }
      return [...out.values()];
    },
    async activeUsers(tenantId, mode, from, to) {
      return users.get(tenantId, mode, from.getTime(), to.getTime()) ?? 0;
    },
    async prune(before) {
      return prune.run(before.getTime()).changes;
    },
  };
}
