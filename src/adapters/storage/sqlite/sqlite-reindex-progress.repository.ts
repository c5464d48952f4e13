import type { ReindexProgressRepository } from '../../../core/embeddings/reindex-progress.repository.ts';
import { reindexRecordFromRow, type ReindexProgressRow } from '../reindex-progress-row.ts';
import type { SqliteDb } from './sqlite.database.ts';

type Row = ReindexProgressRow<number>;

const toRecord = (r: Row) => reindexRecordFromRow(r, (ms: number) => new Date(ms));

/** The one-row `reindex_progress` table (slot 1): the store's last reindex run. */
export function createSqliteReindexProgressRepository(db: SqliteDb): ReindexProgressRepository {
  const upsert = db.prepare(`INSERT INTO reindex_progress (slot, run_id, model_id, dims, tenant_id, mode, workspace, state,
      stop_reason, done, total, written, started_at, updated_at, finished_at)
    VALUES (1, @run_id, @model_id, @dims, @tenant_id, @mode, @workspace, @state, @stop_reason, @done, @total, @written,
      @started_at, @updated_at, @finished_at)
    ON CONFLICT (slot) DO UPDATE SET run_id = excluded.run_id, model_id = excluded.model_id, dims = excluded.dims,
      tenant_id = excluded.tenant_id, mode = excluded.mode, workspace = excluded.workspace, state = excluded.state,
      stop_reason = excluded.stop_reason, done = excluded.done, total = excluded.total, written = excluded.written,
      started_at = excluded.started_at, updated_at = excluded.updated_at, finished_at = excluded.finished_at`);
  const update = db.prepare(`UPDATE reindex_progress SET state = @state, stop_reason = @stop_reason, done = @done,
      total = @total, written = @written, updated_at = @updated_at, finished_at = @finished_at
    WHERE slot = 1 AND run_id = @run_id`);
  const latest = db.prepare<[], Row>('SELECT * FROM reindex_progress WHERE slot = 1');

  return {
    async start(r) {
      upsert.run({
        run_id: r.runId, model_id: r.modelId, dims: r.dims, tenant_id: r.filter.tenantId ?? null, mode: r.filter.mode ?? null,
        workspace: r.filter.workspace ?? null, state: r.state, stop_reason: r.stopReason, done: r.done, total: r.total,
        written: r.written, started_at: r.startedAt.getTime(), updated_at: r.updatedAt.getTime(),
        finished_at: r.finishedAt?.getTime() ?? null,
      });
    },
    async update(runId, u) {
      return update.run({
        run_id: runId, state: u.state, stop_reason: u.stopReason, done: u.done, total: u.total, written: u.written,
        updated_at: u.updatedAt.getTime(), finished_at: u.finishedAt?.getTime() ?? null,
      }).changes === 1;
    },
    async latest() {
      const row = latest.get();
      return row ? toRecord(row) : null;
    },
  };
}
