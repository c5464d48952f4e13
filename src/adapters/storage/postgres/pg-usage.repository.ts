import type { UsageRepository } from '../../../core/analytics/usage.repository.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { pgTime, type PgExecutor } from './pg-executor.ts';

export function createPgUsageRepository(db: PgExecutor): UsageRepository {
  return {
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
