import type { SearchLogEntry, SearchLogRepository } from '../../../core/search/search-log.ts';
import { normalizeQuery } from '../sqlite/sqlite-search-log.repository.ts';
import { pgJson, pgTime, type PgExecutor } from './pg-executor.ts';

export function createPgSearchLogRepository(db: PgExecutor): SearchLogRepository {
  return {
    async appendMany(entries) {
      if (entries.length === 0) return;
      // One statement (one round trip, one WAL flush) for a whole batch: a column per array, unnested in step.
      const column = <T>(of: (e: SearchLogEntry) => T): T[] => entries.map(of);
      await db.query(`INSERT INTO search_log (tenant_id, mode, workspace, user_id, surface, kind, query, query_norm,
        results_count, execution_ms, avg_score, filters, created_at)
        SELECT t, m, w, u, s, k, q, qn, rc, ms, sc, f::jsonb, at FROM unnest($1::text[], $2::text[], $3::text[],
          $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::float8[], $11::float8[],
          $12::text[], $13::timestamptz[]) AS b(t, m, w, u, s, k, q, qn, rc, ms, sc, f, at)`,
      [column((e) => e.scope.tenantId), column((e) => e.scope.mode), column((e) => e.scope.workspace),
        column((e) => e.userId), column((e) => e.surface), column((e) => e.kind), column((e) => e.query),
        column((e) => normalizeQuery(e.query)), column((e) => e.resultsCount), column((e) => e.executionMs),
        column((e) => e.avgScore), column((e) => pgJson(e.filters)), column((e) => pgTime(e.at))]);
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
    async zeroResultQueries({ scope, from, to, limit }) {
      const rows = await db.query<{ query: string; count: number; last_seen: Date }>(
        `SELECT query_norm AS query, COUNT(*)::int AS count, MAX(created_at) AS last_seen
         FROM search_log WHERE tenant_id = $1 AND mode = $2 AND workspace = $3 AND created_at >= $4 AND created_at < $5
           AND query_norm <> '' AND results_count = 0
         GROUP BY query_norm ORDER BY count DESC, last_seen DESC, query_norm COLLATE "C" ASC LIMIT $6`,
      [scope.tenantId, scope.mode, scope.workspace, pgTime(from), pgTime(to), limit]);
      return rows.map((q) => ({ query: q.query, count: q.count, lastSeen: q.last_seen }));
    },
  };
}
