import type { SearchLogRepository } from '../../../core/search/search-log.ts';
import type { SqliteDb } from './sqlite.database.ts';

/** How queries are grouped for suggestions: case and spacing do not make a different query. */
export const normalizeQuery = (q: string): string => q.trim().replace(/\s+/g, ' ').toLowerCase();

export function createSqliteSearchLogRepository(db: SqliteDb): SearchLogRepository {
  const insert = db.prepare(`INSERT INTO search_log (tenant_id, mode, workspace, user_id, surface, kind, query,
    query_norm, results_count, execution_ms, avg_score, filters, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const suggest = db.prepare<[string, string, string, string, number], { text: string; frequency: number }>(
    `SELECT query_norm AS text, COUNT(*) AS frequency FROM search_log
     WHERE tenant_id = ? AND mode = ? AND workspace = ? AND query_norm LIKE ? ESCAPE '\\' AND query_norm <> ''
     GROUP BY query_norm ORDER BY frequency DESC, MAX(created_at) DESC LIMIT ?`);

  return {
    async append(e) {
      insert.run(e.scope.tenantId, e.scope.mode, e.scope.workspace, e.userId, e.surface, e.kind, e.query,
        normalizeQuery(e.query), e.resultsCount, e.executionMs, e.avgScore, JSON.stringify(e.filters), e.at.getTime());
    },
    async suggestQueries(scope, prefix, limit) {
      const pattern = `${normalizeQuery(prefix).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return suggest.all(scope.tenantId, scope.mode, scope.workspace, pattern, limit);
    },
  };
}
