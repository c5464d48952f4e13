import type { Clock } from '../core/clock.ts';
import type { ReindexProgressRepository, ReindexRunState } from '../core/embeddings/reindex-progress.repository.ts';
import { reindexRunView } from '../core/embeddings/reindex-record.ts';

/**
 * What `/health` says of the store's last `mnemo reindex` run (`embeddings.reindex_run`): the same on every node,
 * since the record lives in the store. `/health` needs no key, so the run's filter is only said to exist
 * (`filtered`), never named: a tenant's name is not public.
 */
export interface ReindexRunHealth {
  /** `running`, `stopped` (part-way; run `mnemo reindex` again to resume) or `complete`. */
  state: ReindexRunState;
  /** Why it stopped: `limit`, `interrupted`, `failed`, `unfinished`, or `no_heartbeat` (the process died); else null. */
  stop_reason: string | null;
  /** The model the run gives vectors of (usually the next one, while the server still runs on the old one). */
  model: string;
  dimensions: number;
  /** True when the run covered only some tenants, modes or workspaces (`--tenant`, `--mode`, `--workspace`). */
  filtered: boolean;
  /** Memories (of the run's filter) with a vector of `model`, and all of them, as the run last counted. */
  done: number;
  total: number;
  /** Vectors the run wrote. */
  written: number;
  started_at: string;
  /** The run's last write (progress or heartbeat). */
  updated_at: string;
  finished_at: string | null;
}

/** Reads the record on each probe: one primary-key lookup. Null when no run was recorded (or the store failed). */
export function reindexRunHealth(records: Pick<ReindexProgressRepository, 'latest'>, clock: Clock): () => Promise<ReindexRunHealth | null> {
  return async () => {
    let record;
    try {
      record = await records.latest();
    } catch {
      return null; // `/health` already says the store is degraded
    }
    if (!record) return null;
    const view = reindexRunView(record, clock.now());
    return {
      state: view.state, stop_reason: view.stopReason, model: record.modelId, dimensions: record.dims,
      filtered: Object.keys(record.filter).length > 0, done: record.done, total: record.total, written: record.written,
      started_at: record.startedAt.toISOString(), updated_at: record.updatedAt.toISOString(),
      finished_at: record.finishedAt?.toISOString() ?? null,
    };
  };
}
