import type { RequestMetricRow, RequestMetricsRepository, RequestMinute } from '../../../core/analytics/request-metrics.repository.ts';
import { pgInt, pgJson, pgTime, pipelinedTransaction, type PgExecutor, type PgStatement } from './pg-executor.ts';

interface Row {
  tenant_id: string; mode: string; minute: Date | string; surface: string; route: string; status_class: number;
  key_id: string; user_id: string; requests: number; latency_sum_ms: number; latency_max_ms: number;
  histogram: Record<string, number>; bytes_in: string | number; bytes_out: string | number;
}

const COLUMNS = 14;
/** Rows per INSERT statement (PostgreSQL takes at most 65,535 parameters in one). */
const ROWS_PER_STATEMENT = 1000;

export function createPgRequestMetricsRepository(db: PgExecutor): RequestMetricsRepository {
  return {
    async append(rows) {
      if (rows.length === 0) return;
      // One transaction, stored whole or not at all, its statements pipelined: one round trip per flush.
      const statements: PgStatement[] = [];
      for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
        const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
        const values = chunk.map((_, i) => `(${Array.from({ length: COLUMNS }, (_c, j) => `$${i * COLUMNS + j + 1}`).join(', ')})`);
        const params = chunk.flatMap((r: RequestMetricRow) => [r.tenantId, r.mode, pgTime(r.minute), r.surface, r.route,
          r.statusClass, r.keyId, r.userId, r.requests, r.latencySumMs, r.latencyMaxMs, pgJson(r.histogram), r.bytesIn, r.bytesOut]);
        statements.push({ sql: `INSERT INTO request_metrics (tenant_id, mode, minute, surface, route, status_class, key_id, user_id,
          requests, latency_sum_ms, latency_max_ms, histogram, bytes_in, bytes_out) VALUES ${values.join(', ')}`, params });
      }
      await pipelinedTransaction(db, statements);
    },
    async list(tenantId, mode, from, to) {
      const rows = await db.query<Row>(
        `SELECT * FROM request_metrics WHERE tenant_id = $1 AND mode = $2 AND minute >= $3 AND minute < $4 ORDER BY minute, id`,
        [tenantId, mode, pgTime(from), pgTime(to)]);
      return rows.map((r): RequestMetricRow => ({
        tenantId: r.tenant_id, mode: r.mode, minute: new Date(r.minute), surface: r.surface, route: r.route,
        statusClass: r.status_class, keyId: r.key_id, userId: r.user_id, requests: r.requests, latencySumMs: r.latency_sum_ms,
        latencyMaxMs: r.latency_max_ms, histogram: r.histogram, bytesIn: pgInt(r.bytes_in), bytesOut: pgInt(r.bytes_out),
      }));
    },
    async minutes(tenantId, mode, from, to) {
      const args = [tenantId, mode, pgTime(from), pgTime(to)];
      const totals = await db.query<{ minute: Date | string; requests: string; errors: string; server_errors: string; latency: number }>(
        `SELECT minute, SUM(requests)::bigint AS requests,
           SUM(CASE WHEN status_class >= 4 THEN requests ELSE 0 END)::bigint AS errors,
           SUM(CASE WHEN status_class >= 5 THEN requests ELSE 0 END)::bigint AS server_errors,
           SUM(latency_sum_ms)::float8 AS latency
         FROM request_metrics WHERE tenant_id = $1 AND mode = $2 AND minute >= $3 AND minute < $4 GROUP BY minute ORDER BY minute`, args);
      const histograms = await db.query<{ minute: Date | string; bucket: string; n: string }>(
        `SELECT m.minute, j.key AS bucket, SUM(j.value::bigint)::bigint AS n
         FROM request_metrics m, jsonb_each_text(m.histogram) AS j(key, value)
         WHERE m.tenant_id = $1 AND m.mode = $2 AND m.minute >= $3 AND m.minute < $4 GROUP BY m.minute, j.key`, args);
      const out = new Map<number, RequestMinute>();
      for (const r of totals) {
        const minute = new Date(r.minute);
        out.set(minute.getTime(), {
          minute, requests: pgInt(r.requests), errors: pgInt(r.errors), serverErrors: pgInt(r.server_errors), latencySumMs: r.latency, histogram: {},
        });
      }
      for (const h of histograms) {
        const m = out.get(new Date(h.minute).getTime());
        if (m) m.histogram[h.bucket] = pgInt(h.n);
      }
      return [...out.values()];
    },
    async activeUsers(tenantId, mode, from, to) {
      const [r] = await db.query<{ n: number }>(
        `SELECT COUNT(DISTINCT user_id)::int AS n FROM request_metrics
         WHERE tenant_id = $1 AND mode = $2 AND minute >= $3 AND minute < $4 AND user_id <> ''`, [tenantId, mode, pgTime(from), pgTime(to)]);
      return r!.n;
    },
    async prune(before) {
      const rows = await db.query<{ id: string }>('DELETE FROM request_metrics WHERE minute < $1 RETURNING id', [pgTime(before)]);
      return rows.length;
    },
  };
}
