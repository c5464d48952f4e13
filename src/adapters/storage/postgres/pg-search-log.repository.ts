import type { SearchLogEntry, SearchLogRepository } from '../../../core/search/search-log.ts';
import { normalizeQuery } from '../sqlite/sqlite-search-log.repository.ts';
import { pgJson, pgTime, type PgExecutor, type PgQueryable } from './pg-executor.ts';

export function createPgSearchLogRepository(db: PgExecutor): SearchLogRepository {
  const insertOne = (tx: PgQueryable, e: SearchLogEntry) => tx.query(`INSERT INTO search_log (tenant_id, mode, workspace,
    user_id, surface, kind, query, query_norm, results_count, execution_ms, avg_score, filters, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
  [e.scope.tenantId, e.scope.mode, e.scope.workspace, e.userId, e.surface, e.kind, e.query, normalizeQuery(e.query),
    e.resultsCount, e.executionMs, e.avgScore, pgJson(e.filters), pgTime(e.at)]);

  return {
    async appendMany(entries) {
      if (entries.length === 0) return;
      // One transaction (one WAL flush) for a whole batch.
      await db.transaction(async (tx) => { for (const e of entries) await insertOne(tx, e); });
    },
    async suggestQueries(scope, prefix, limit) {
      const pattern = `${normalizeQuery(prefix).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return db.query<{ text: string; frequency: number }>(
        `SELECT query_norm AS text, COUNT(*)::int AS frequency FROM search_log
         WHERE tenant_id = $1 AND mode = $2 AND workspace = $3 AND query_norm LIKE $4 ESCAPE '\\' AND query_norm <> ''
         GROUP BY query_norm ORDER BY frequency DESC, MAX(created_at) DESC LIMIT $5`,
        [scope.tenantId, scope.mode, scope.workspace, pattern, limit]);
    },
    // Stats: one scope, `created_at` in [from, to). Vector searches (empty query text) count in the totals only.
    async stats({ scope, from, to, buckets, topLimit }) {
      const window = [scope.tenantId, scope.mode, scope.workspace, pgTime(from), pgTime(to)];
      const where = 'tenant_id = $1 AND mode = $2 AND workspace = $3 AND created_at >= $4 AND created_at < $5';
      const [t] = await db.query<{ n: number; u: number; r: number | null; ms: number | null; z: number }>(
        `SELECT COUNT(*)::int AS n, COUNT(DISTINCT NULLIF(query_norm, ''))::int AS u, AVG(results_count)::float8 AS r,
           AVG(execution_ms)::float8 AS ms, COUNT(*) FILTER (WHERE results_count = 0)::int AS z
         FROM search_log WHERE ${where}`, window);
      const top = await db.query<{ query: string; count: number; avg_score: number | null }>(
        `SELECT query_norm AS query, COUNT(*)::int AS count, AVG(avg_score)::float8 AS avg_score
         FROM search_log WHERE ${where} AND query_norm <> ''
         GROUP BY query_norm ORDER BY count DESC, query_norm COLLATE "C" ASC LIMIT $6`, [...window, topLimit]);
      // Every bucket answers, empty or not, in the order given.
      const perBucket = await db.query<{ n: number; ms: number | null }>(
        `SELECT COUNT(s.id)::int AS n, AVG(s.execution_ms)::float8 AS ms
         FROM unnest($6::timestamptz[], $7::timestamptz[]) WITH ORDINALITY AS b(lo, hi, i)
         LEFT JOIN search_log s ON s.tenant_id = $1 AND s.mode = $2 AND s.workspace = $3
           AND s.created_at >= $4 AND s.created_at < $5 AND s.created_at >= b.lo AND s.created_at < b.hi
         GROUP BY b.i ORDER BY b.i`,
        [...window, buckets.map((b) => pgTime(b.start)), buckets.map((b) => pgTime(b.end))]);
      return {
        totalSearches: t!.n,
        uniqueQueries: t!.u,
        avgResults: t!.n > 0 ? t!.r : null,
        avgExecutionMs: t!.n > 0 ? t!.ms : null,
        zeroResultSearches: t!.z,
        topQueries: top.map((q) => ({ query: q.query, count: q.count, avgScore: q.avg_score })),
        buckets: perBucket.map((b) => ({ searches: b.n, avgExecutionMs: b.n > 0 ? b.ms : null })),
      };
    },
  };
}
