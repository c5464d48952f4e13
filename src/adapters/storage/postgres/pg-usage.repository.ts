import type { UsageRepository } from '../../../core/analytics/usage.repository.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { pgInt, pgTime, type PgExecutor } from './pg-executor.ts';

export function createPgUsageRepository(db: PgExecutor): UsageRepository {
  return {
    async memoryStorage(tenantId, mode, since) {
      const rows = await db.query<{ memory_type: string; n: number; bytes: string; added: string }>(
        `SELECT memory_type COLLATE "C" AS memory_type, COUNT(*)::int AS n,
           SUM(octet_length(title) + octet_length(content))::bigint AS bytes,
           SUM(CASE WHEN created_at >= $1 THEN octet_length(title) + octet_length(content) ELSE 0 END)::bigint AS added
         FROM memories WHERE tenant_id = $2 AND mode = $3 GROUP BY 1 ORDER BY bytes DESC, 1`,
        [pgTime(since), tenantId, mode]);
      return rows.map((r) => ({ memoryType: r.memory_type, count: r.n, bytes: pgInt(r.bytes), bytesSince: pgInt(r.added) }));
    },
    async searchesPerMinute(tenantId, mode, from, to) {
      const rows = await db.query<{ minute: Date | string; n: number; ms: number }>(
        `SELECT date_trunc('minute', created_at) AS minute, COUNT(*)::int AS n, SUM(execution_ms)::float8 AS ms FROM search_log
         WHERE tenant_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4 GROUP BY 1 ORDER BY 1`,
        [tenantId, mode, pgTime(from), pgTime(to)]);
      return rows.map((r) => ({ minute: new Date(r.minute), count: r.n, totalMs: r.ms }));
    },
    async operationsPerMinute(tenantId, mode, from, to) {
      const rows = await db.query<{ minute: Date | string; n: number }>(
        `SELECT date_trunc('minute', created_at) AS minute, COUNT(*)::int AS n FROM events
         WHERE tenant_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4
           AND type IN ('memory.created', 'memory.updated', 'memory.deleted')
         GROUP BY 1 ORDER BY 1`,
        [tenantId, mode, pgTime(from), pgTime(to)]);
      return rows.map((r) => ({ minute: new Date(r.minute), count: r.n, totalMs: 0 }));
    },
    async topQueries(tenantId, mode, from, to, limit) {
      const rows = await db.query<{ query: string; n: number; avg: number }>(
        `SELECT query_norm COLLATE "C" AS query, COUNT(*)::int AS n, AVG(execution_ms)::float8 AS avg FROM search_log
         WHERE tenant_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4 AND query_norm <> ''
         GROUP BY 1 ORDER BY n DESC, 1 LIMIT $5`,
        [tenantId, mode, pgTime(from), pgTime(to), limit]);
      return rows.map((r) => ({ query: r.query, count: r.n, avgMs: r.avg }));
    },
    async llmUsagePerMinute(tenantId, mode, from, to) {
      const rows = await db.query<{ minute: Date | string; calls: string; prompt: string; completion: string }>(
        `SELECT date_trunc('minute', finished_at) AS minute, SUM((usage->>'modelCalls')::bigint)::bigint AS calls,
           SUM((usage->>'promptTokens')::bigint)::bigint AS prompt, SUM((usage->>'completionTokens')::bigint)::bigint AS completion
         FROM ingestions
         WHERE tenant_id = $1 AND mode = $2 AND finished_at >= $3 AND finished_at < $4 AND (usage->>'modelCalls')::bigint > 0
         GROUP BY 1 ORDER BY 1`,
        [tenantId, mode, pgTime(from), pgTime(to)]);
      return rows.map((r) => ({
        minute: new Date(r.minute), modelCalls: pgInt(r.calls), promptTokens: pgInt(r.prompt), completionTokens: pgInt(r.completion),
      }));
    },
    async counts(tenantId, mode, from, to) {
      const window = [pgTime(from), pgTime(to), tenantId, mode];
      const [memories] = await db.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM memories WHERE tenant_id = $1 AND mode = $2', [tenantId, mode]);
      const ops = new Map((await db.query<{ type: string; n: number }>(
        `SELECT type, COUNT(*)::int AS n FROM events
         WHERE created_at > $1 AND created_at <= $2 AND tenant_id = $3 AND mode = $4
           AND type IN ('memory.created', 'memory.updated', 'memory.deleted')
         GROUP BY type`, window)).map((r) => [r.type, r.n]));
      const [s] = await db.query<{ n: number; avg: number | null }>(
        `SELECT COUNT(*)::int AS n, AVG(execution_ms)::float8 AS avg FROM search_log
         WHERE created_at > $1 AND created_at <= $2 AND tenant_id = $3 AND mode = $4`, window);
      return {
        totalMemories: memories!.n,
        creates: ops.get('memory.created') ?? 0,
        updates: ops.get('memory.updated') ?? 0,
        deletes: ops.get('memory.deleted') ?? 0,
        searches: s!.n,
        avgSearchMs: s!.n > 0 ? s!.avg : null,
      };
    },
    async activeScopes(from, to) {
      const rows = await db.query<{ tenant_id: string; mode: string }>(
        `SELECT DISTINCT tenant_id COLLATE "C" AS tenant_id, mode FROM events
         WHERE created_at > $1 AND created_at <= $2 AND tenant_id IS NOT NULL AND mode IS NOT NULL
           AND type IN ('memory.created', 'memory.updated', 'memory.deleted', 'search.performed')
         ORDER BY 1, 2`, [pgTime(from), pgTime(to)]);
      return rows.map((r) => ({ tenantId: r.tenant_id, mode: r.mode as KeyMode }));
    },
  };
}
