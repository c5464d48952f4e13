import type { EventRepository } from '../../../core/events/event.repository.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { toStoredEvent, type EventRow, type SqliteOutbox } from './sqlite-outbox.ts';

export function createSqliteEventRepository(db: SqliteDb, outbox: SqliteOutbox): EventRepository {
  const appendTx = db.transaction((events: Parameters<SqliteOutbox['appendInTx']>[0]) => outbox.appendInTx(events));
  const byId = db.prepare<[string], EventRow>('SELECT * FROM events WHERE id = ?');
  const latest = db.prepare('SELECT COALESCE(MAX(seq), 0) FROM events').pluck();
  // Events whose deliveries are still pending are kept whatever their age: nothing queued may lose its event.
  const prune = db.prepare(`DELETE FROM events WHERE created_at < ?
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = events.seq AND d.state = 'pending')`);

  return {
    async append(events) {
      const stored = appendTx(events);
      outbox.notify(stored);
      return stored;
    },

    async readAfter(q) {
      let sql: string;
      const params: unknown[] = [q.afterSeq];
      if (q.uptoSeq === undefined) {
        sql = `SELECT * FROM events WHERE seq > ? AND ((tenant_id = ? AND mode = ?) OR tenant_id IS NULL)`;
      } else {
        // The unary + keeps the scope index out: the read walks the seq range alone, so it scans at most that range
        // (the index's OR plan would gather and sort every row of the tenant after the cursor, and every system row).
        sql = `SELECT * FROM events WHERE seq > ? AND seq <= ? AND ((+tenant_id = ? AND mode = ?) OR +tenant_id IS NULL)`;
        params.push(q.uptoSeq);
      }
      params.push(q.tenantId, q.mode);
      if (q.workspace !== null) {
        sql += ' AND (workspace IS NULL OR workspace = ?)';
        params.push(q.workspace);
      }
      if (q.types && q.types.length > 0) {
        sql += ` AND type IN (${q.types.map(() => '?').join(', ')})`;
        params.push(...q.types);
      }
      sql += ' ORDER BY seq LIMIT ?';
      params.push(q.limit);
      return db.prepare<unknown[], EventRow>(sql).all(...params).map(toStoredEvent);
    },

    async findById(id) {
      const row = byId.get(id);
      return row ? toStoredEvent(row) : null;
    },

    async latestSeq() {
      return latest.get() as number;
    },

    async prune(olderThan) {
      return prune.run(olderThan.getTime()).changes;
    },

    onAppended: (listener) => outbox.onAppended(listener),
  };
}
