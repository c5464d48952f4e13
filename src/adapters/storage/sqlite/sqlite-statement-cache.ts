import type { Statement } from 'better-sqlite3';
import type { SqliteDb } from './sqlite.database.ts';

/** Distinct SQL texts a cache keeps prepared; the least recently prepared is dropped beyond it. */
export const STATEMENT_CACHE_MAX = 256;

/**
 * Prepared statements for SQL built per call (an `IN (?, ?, …)` list as long as the call's ids). Preparing such a
 * statement costs more than running it on a handful of rows (a third of a hybrid search's SQL time in a profile), and
 * the texts repeat (one per list length), so each text is prepared once. Bounded, since list lengths vary.
 */
export function createStatementCache(db: SqliteDb, max = STATEMENT_CACHE_MAX) {
  const cache = new Map<string, Statement>();
  return <P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> => {
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      statement = db.prepare(sql);
      cache.set(sql, statement);
    }
    return statement as Statement<P, R>;
  };
}
