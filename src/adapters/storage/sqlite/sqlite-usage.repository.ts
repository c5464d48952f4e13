import type { UsageRepository } from '../../../core/analytics/usage.repository.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';

export function createSqliteUsageRepository(db: SqliteDb): UsageRepository {
  const memories = db.prepare<[string, string], number>('SELECT COUNT(*) FROM memories WHERE tenant_id = ? AND mode = ?').pluck();
  const operations = db.prepare<[number, number, string, string], { type: string; n: number }>(
    `SELECT type, COUNT(*) AS n FROM events
     WHERE created_at > ? AND created_at <= ? AND tenant_id = ? AND mode = ?
       AND type IN ('memory.created', 'memory.updated', 'memory.deleted')
     GROUP BY type`);
  const searches = db.prepare<[string, string, number, number], { n: number; avg: number | null }>(
    `SELECT COUNT(*) AS n, AVG(execution_ms) AS avg FROM search_log
     WHERE tenant_id = ? AND mode = ? AND created_at > ? AND created_at <= ?`);
  const active = db.prepare<[number, number], { tenant_id: string; mode: string }>(
    `SELECT DISTINCT tenant_id, mode FROM events
     WHERE created_at > ? AND created_at <= ? AND tenant_id IS NOT NULL AND mode IS NOT NULL
       AND type IN ('memory.created', 'memory.updated', 'memory.deleted', 'search.performed')
     ORDER BY tenant_id, mode`);

  return {
    async counts(tenantId, mode, from, to) {
      const ops = new Map(operations.all(from.getTime(), to.getTime(), tenantId, mode).map((r) => [r.type, r.n]));
      const s = searches.get(tenantId, mode, from.getTime(), to.getTime())!;
      return {
        totalMemories: memories.get(tenantId, mode) ?? 0,
        creates: ops.get('memory.created') ?? 0,
        updates: ops.get('memory.updated') ?? 0,
        deletes: ops.get('memory.deleted') ?? 0,
        searches: s.n,
        avgSearchMs: s.n > 0 ? s.avg : null,
      };
    },
    async activeScopes(from, to) {
      return active.all(from.getTime(), to.getTime()).map((r) => ({ tenantId: r.tenant_id, mode: r.mode as KeyMode }));
    },
  };
}
