import type { ReindexProgressRecord } from '../../core/embeddings/reindex-progress.repository.ts';
import type { KeyMode } from '../../core/scope.ts';

/** A `reindex_progress` row as both adapters read it; `T` is how the store returns a time (SQLite: epoch ms, PostgreSQL: Date). */
export interface ReindexProgressRow<T> {
  run_id: string; model_id: string; dims: number; tenant_id: string | null; mode: string | null; workspace: string | null;
  state: string; stop_reason: string | null; done: number; total: number; written: number; started_at: T;
  updated_at: T; finished_at: T | null;
}

/** The record of a row; one mapping for both stores (the columns and their meaning are the same). */
export function reindexRecordFromRow<T>(r: ReindexProgressRow<T>, toDate: (t: T) => Date): ReindexProgressRecord {
  return {
    runId: r.run_id, modelId: r.model_id, dims: r.dims,
    filter: {
      ...(r.tenant_id === null ? {} : { tenantId: r.tenant_id }),
      ...(r.mode === null ? {} : { mode: r.mode as KeyMode }),
      ...(r.workspace === null ? {} : { workspace: r.workspace }),
    },
    state: r.state as ReindexProgressRecord['state'], stopReason: r.stop_reason as ReindexProgressRecord['stopReason'],
    done: r.done, total: r.total, written: r.written, startedAt: toDate(r.started_at), updatedAt: toDate(r.updated_at),
    finishedAt: r.finished_at === null ? null : toDate(r.finished_at),
  };
}
