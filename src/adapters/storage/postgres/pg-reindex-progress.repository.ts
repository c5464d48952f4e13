import type { ReindexProgressRepository } from '../../../core/embeddings/reindex-progress.repository.ts';
import { reindexRecordFromRow, type ReindexProgressRow } from '../reindex-progress-row.ts';
import { pgTime, pgTimeOrNull, type PgExecutor } from './pg-executor.ts';

type Row = ReindexProgressRow<Date>;

const toRecord = (r: Row) => reindexRecordFromRow(r, (d: Date) => d);

/** The one-row `reindex_progress` table (slot 1): the store's last reindex run, seen by every node. */
export function createPgReindexProgressRepository(db: PgExecutor): ReindexProgressRepository {
  return {
    async start(r) {
      await db.query(`INSERT INTO reindex_progress (slot, run_id, model_id, dims, tenant_id, mode, workspace, state,
          stop_reason, done, total, written, started_at, updated_at, finished_at)
        VALUES (1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
        ON CONFLICT (slot) DO UPDATE SET run_id = EXCLUDED.run_id, model_id = EXCLUDED.model_id, dims = EXCLUDED.dims,
          tenant_id = EXCLUDED.tenant_id, mode = EXCLUDED.mode, workspace = EXCLUDED.workspace, state = EXCLUDED.state,
          stop_reason = EXCLUDED.stop_reason, done = EXCLUDED.done, total = EXCLUDED.total, written = EXCLUDED.written,
          started_at = EXCLUDED.started_at, updated_at = EXCLUDED.updated_at, finished_at = EXCLUDED.finished_at`, [
        r.runId, r.modelId, r.dims, r.filter.tenantId ?? null, r.filter.mode ?? null, r.filter.workspace ?? null, r.state,
        r.stopReason, r.done, r.total, r.written, pgTime(r.startedAt), pgTime(r.updatedAt), pgTimeOrNull(r.finishedAt),
      ]);
    },
    async update(runId, u) {
      const rows = await db.query(`UPDATE reindex_progress SET state = $2, stop_reason = $3, done = $4, total = $5,
          written = $6, updated_at = $7, finished_at = $8
        WHERE slot = 1 AND run_id = $1 RETURNING slot`, [
        runId, u.state, u.stopReason, u.done, u.total, u.written, pgTime(u.updatedAt), pgTimeOrNull(u.finishedAt),
      ]);
      return rows.length === 1;
    },
    async latest() {
      const [row] = await db.query<Row>('SELECT * FROM reindex_progress WHERE slot = 1');
      return row ? toRecord(row) : null;
    },
  };
}
