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

  const storageByType = db.prepare<[number, string, string], { memory_type: string; n: number; bytes: number; added: number }>(
    `SELECT memory_type, COUNT(*) AS n,
       SUM(length(CAST(title AS BLOB)) + length(CAST(content AS BLOB))) AS bytes,
       SUM(CASE WHEN created_at >= ? THEN length(CAST(title AS BLOB)) + length(CAST(content AS BLOB)) ELSE 0 END) AS added
     FROM memories WHERE tenant_id = ? AND mode = ? GROUP BY memory_type ORDER BY bytes DESC, memory_type`);
  const searchMinutes = db.prepare<[string, string, number, number], { minute: number; n: number; ms: number }>(
    `SELECT (created_at / 60000) * 60000 AS minute, COUNT(*) AS n, SUM(execution_ms) AS ms FROM search_log
     WHERE tenant_id = ? AND mode = ? AND created_at >= ? AND created_at < ? GROUP BY minute ORDER BY minute`);
  const operationMinutes = db.prepare<[string, string, number, number], { minute: number; n: number }>(
    `SELECT (created_at / 60000) * 60000 AS minute, COUNT(*) AS n FROM events
     WHERE tenant_id = ? AND mode = ? AND created_at >= ? AND created_at < ?
       AND type IN ('memory.created', 'memory.updated', 'memory.deleted')
     GROUP BY minute ORDER BY minute`);
  const top = db.prepare<[string, string, number, number, number], { query: string; n: number; avg: number }>(
    `SELECT query_norm AS query, COUNT(*) AS n, AVG(execution_ms) AS avg FROM search_log
     WHERE tenant_id = ? AND mode = ? AND created_at >= ? AND created_at < ? AND query_norm <> ''
     GROUP BY query_norm ORDER BY n DESC, query_norm LIMIT ?`);
  const llmMinutes = db.prepare<[string, string, number, number], { minute: number; calls: number; prompt: number; completion: number }>(
    `SELECT (finished_at / 60000) * 60000 AS minute, SUM(json_extract(usage, '$.modelCalls')) AS calls,
       SUM(json_extract(usage, '$.promptTokens')) AS prompt, SUM(json_extract(usage, '$.completionTokens')) AS completion
     FROM ingestions
     WHERE tenant_id = ? AND mode = ? AND finished_at >= ? AND finished_at < ? AND json_extract(usage, '$.modelCalls') > 0
     GROUP BY minute ORDER BY minute`);

  return {
    async memoryStorage(tenantId, mode, since) {
      return storageByType.all(since.getTime(), tenantId, mode)
        .map((r) => ({ memoryType: r.memory_type, count: r.n, bytes: r.bytes, bytesSince: r.added }));
    },
    async searchesPerMinute(tenantId, mode, from, to) {
      return searchMinutes.all(tenantId, mode, from.getTime(), to.getTime()).map((r) => ({ minute: new Date(r.minute), count: r.n, totalMs: r.ms }));
    },
    async operationsPerMinute(tenantId, mode, from, to) {
      return operationMinutes.all(tenantId, mode, from.getTime(), to.getTime()).map((r) => ({ minute: new Date(r.minute), count: r.n, totalMs: 0 }));
    },
    async topQueries(tenantId, mode, from, to, limit) {
      return top.all(tenantId, mode, from.getTime(), to.getTime(), limit).map((r) => ({ query: r.query, count: r.n, avgMs: r.avg }));
    },
    async llmUsagePerMinute(tenantId, mode, from, to) {
      return llmMinutes.all(tenantId, mode, from.getTime(), to.getTime()).map((r) => ({
        minute: new Date(r.minute), modelCalls: r.calls, promptTokens: r.prompt, completionTokens: r.completion,
      }));
    },
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
