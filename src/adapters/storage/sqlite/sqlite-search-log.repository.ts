import type { SearchLogEntry, SearchLogRepository } from '../../../core/search/search-log.ts';
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

  // Stats: one scope, `created_at` in [from, to). Vector searches (empty query text) count in the totals only.
  const where = 'tenant_id = ? AND mode = ? AND workspace = ? AND created_at >= ? AND created_at < ?';
  type Window = [string, string, string, number, number];
  const totals = db.prepare<Window, { n: number; u: number; r: number | null; ms: number | null; z: number | null }>(
    `SELECT COUNT(*) AS n, COUNT(DISTINCT NULLIF(query_norm, '')) AS u, AVG(results_count) AS r, AVG(execution_ms) AS ms,
       SUM(CASE WHEN results_count = 0 THEN 1 ELSE 0 END) AS z
     FROM search_log WHERE ${where}`);
  const top = db.prepare<[...Window, number], { query: string; count: number; avgScore: number | null }>(
    `SELECT query_norm AS query, COUNT(*) AS count, AVG(avg_score) AS avgScore
     FROM search_log WHERE ${where} AND query_norm <> ''
     GROUP BY query_norm ORDER BY count DESC, query_norm ASC LIMIT ?`);
  const zeroResults = db.prepare<[...Window, number], { query: string; count: number; lastSeen: number }>(
    `SELECT query_norm AS query, COUNT(*) AS count, MAX(created_at) AS lastSeen
     FROM search_log WHERE ${where} AND query_norm <> '' AND results_count = 0
     GROUP BY query_norm ORDER BY count DESC, lastSeen DESC, query_norm ASC LIMIT ?`);
  // The buckets arrive as a JSON array of [start, end] epoch milliseconds; every bucket answers, empty or not.
  const perBucket = db.prepare<[string, ...Window], { n: number; ms: number | null }>(
    `WITH b(i, lo, hi) AS (
       SELECT CAST(key AS INTEGER), json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
     SELECT COUNT(s.id) AS n, AVG(s.execution_ms) AS ms
     FROM b LEFT JOIN search_log s ON s.tenant_id = ? AND s.mode = ? AND s.workspace = ?
       AND s.created_at >= ? AND s.created_at < ? AND s.created_at >= b.lo AND s.created_at < b.hi
     GROUP BY b.i ORDER BY b.i`);

  const insertOne = (e: SearchLogEntry) => insert.run(e.scope.tenantId, e.scope.mode, e.scope.workspace, e.userId,
    e.surface, e.kind, e.query, normalizeQuery(e.query), e.resultsCount, e.executionMs, e.avgScore, JSON.stringify(e.filters),
    e.at.getTime());
  // One commit (one fsync under synchronous=FULL) for a whole batch.
  const insertMany = db.transaction((entries: readonly SearchLogEntry[]) => { for (const e of entries) insertOne(e); });

  return {
    async appendMany(entries) {
      if (entries.length > 0) insertMany(entries);
    },
    async suggestQueries(scope, prefix, limit) {
      const pattern = `${normalizeQuery(prefix).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return suggest.all(scope.tenantId, scope.mode, scope.workspace, pattern, limit);
    },
    async stats({ scope, from, to, buckets, topLimit }) {
      const window: Window = [scope.tenantId, scope.mode, scope.workspace, from.getTime(), to.getTime()];
      const t = totals.get(...window)!;
      const slices = JSON.stringify(buckets.map((b) => [b.start.getTime(), b.end.getTime()]));
      return {
        totalSearches: t.n,
        uniqueQueries: t.u,
        avgResults: t.n > 0 ? t.r : null,
        avgExecutionMs: t.n > 0 ? t.ms : null,
        zeroResultSearches: t.z ?? 0,
        topQueries: top.all(...window, topLimit),
        buckets: perBucket.all(slices, ...window).map((b) => ({ searches: b.n, avgExecutionMs: b.n > 0 ? b.ms : null })),
      };
    },
    async zeroResultQueries({ scope, from, to, limit }) {
      return zeroResults.all(scope.tenantId, scope.mode, scope.workspace, from.getTime(), to.getTime(), limit)
        .map((q) => ({ query: q.query, count: q.count, lastSeen: new Date(q.lastSeen) }));
    },
  };
}
