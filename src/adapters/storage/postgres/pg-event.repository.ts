import type { EventRepository } from '../../../core/events/event.repository.ts';
import { pgInt, pgTime, pipelinedTransaction, SqlParams, type PgExecutor } from './pg-executor.ts';
import { toStoredEvent, type PgEventRow, type PgOutbox } from './pg-outbox.ts';

export function createPgEventRepository(db: PgExecutor, outbox: PgOutbox): EventRepository {
  return {
    async append(events) {
      if (events.length === 0) return [];
      // Without a candidate webhook the append needs no answer before its COMMIT: one pipelined round trip. Otherwise
      // nothing was appended, and the transaction that reads the webhooks and stores the deliveries runs instead.
      const pipelined = outbox.pipelinedAppend(events, (p) => outbox.noCandidateWebhooks(events, p));
      const rows = (await pipelinedTransaction(db, pipelined.statements)).at(-1) as PgEventRow[];
      const stored = pipelined.storedBy(rows) ?? await db.transaction((tx) => outbox.appendInTx(tx, events));
      outbox.notify(stored);
      return stored;
    },

    async readAfter(q) {
      const p = new SqlParams();
      let sql = `SELECT * FROM events WHERE seq > ${p.add(q.afterSeq)}
        AND ((tenant_id = ${p.add(q.tenantId)} AND mode = ${p.add(q.mode)}) OR tenant_id IS NULL)`;
      if (q.uptoSeq !== undefined) sql += ` AND seq <= ${p.add(q.uptoSeq)}`;
      if (q.workspace !== null) sql += ` AND (workspace IS NULL OR workspace = ${p.add(q.workspace)})`;
      if (q.types && q.types.length > 0) sql += ` AND type = ANY(${p.add(q.types)}::text[])`;
      sql += ` ORDER BY seq LIMIT ${p.add(q.limit)}`;
      return (await db.query<PgEventRow>(sql, p.values)).map(toStoredEvent);
    },

    async findById(id) {
      const [row] = await db.query<PgEventRow>('SELECT * FROM events WHERE id = $1', [id]);
      return row ? toStoredEvent(row) : null;
    },

    async latestSeq() {
      const [row] = await db.query<{ seq: number | string }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM events');
      return pgInt(row!.seq);
    },

    async prune(olderThan) {
      // Events whose deliveries are still pending are kept whatever their age: nothing queued may lose its event.
      const rows = await db.query(`DELETE FROM events WHERE created_at < $1
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = events.seq AND d.state = 'pending')
        RETURNING seq`, [pgTime(olderThan)]);
      return rows.length;
    },

    onAppended: (listener) => outbox.onAppended(listener),
  };
}
