import type { SearchLogRepository } from '../../../core/search/search-log.ts';
import { normalizeQuery } from '../sqlite/sqlite-search-log.repository.ts';
import { pgJson, pgTime, type PgExecutor } from './pg-executor.ts';

export function createPgSearchLogRepository(db: PgExecutor): SearchLogRepository {
  return {
    async append(e) {
      await db.query(`INSERT INTO search_log (tenant_id, mode, workspace, user_id, surface, kind, query,
        query_norm, results_count, execution_ms, avg_score, filters, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [e.scope.tenantId, e.scope.mode, e.scope.workspace, e.userId, e.surface, e.kind, e.query, normalizeQuery(e.query),
        e.resultsCount, e.executionMs, e.avgScore, pgJson(e.filters), pgTime(e.at)]);
    },
    async suggestQueries(scope, prefix, limit) {
      const pattern = `${normalizeQuery(prefix).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return db.query<{ text: string; frequency: number }>(
        `SELECT query_norm AS text, COUNT(*)::int AS frequency FROM search_log
         WHERE tenant_id = $1 AND mode = $2 AND workspace = $3 AND query_norm LIKE $4 ESCAPE '\\' AND query_norm <> ''
         GROUP BY query_norm ORDER BY frequency DESC, MAX(created_at) DESC LIMIT $5`,
        [scope.tenantId, scope.mode, scope.workspace, pattern, limit]);
    },
  };
}
