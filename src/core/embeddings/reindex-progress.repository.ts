import type { ScopeFilter } from '../memories/memory-maintenance.ts';

/**
 * The store's record of its last `mnemo reindex` run, so that `/health` on any node can tell whether a reindex is
 * running, stopped part-way or done. One record per store (not per node, not per process): a run started later
 * replaces it. The memories themselves stay the progress a run resumes from (core/embeddings/reindex.ts); this record
 * only reports it.
 */

/**
 * `running`: the run says it is working (read as `stopped` once its heartbeat is older than REINDEX_STALE_AFTER_MS,
 * see reindex-record.ts); `stopped`: it ended before every memory of its filter had a vector of its model;
 * `complete`: every one had.
 */
export type ReindexRunState = 'running' | 'stopped' | 'complete';

/**
 * Why a run stopped: `limit` (`--limit`), `interrupted` (Ctrl-C, SIGTERM), `failed` (an error: the embedder, the
 * store), `unfinished` (memories kept being re-embedded by a server faster than the run caught up). A crashed run
 * never says so itself: reading its stale heartbeat gives `no_heartbeat`.
 */
export type ReindexStopReason = 'limit' | 'interrupted' | 'failed' | 'unfinished';

export interface ReindexProgressRecord {
  /** This run's id (a random UUID): a run's writes apply only while it is the store's last run. */
  runId: string;
  modelId: string;
  dims: number;
  /** Which memories the run covers (`--tenant`, `--mode`, `--workspace`); empty: all. */
  filter: ScopeFilter;
  state: ReindexRunState;
  /** Set when `state` is `stopped`, null otherwise. */
  stopReason: ReindexStopReason | null;
  /** Memories of the filter with a vector of the model, as the run last counted them. */
  done: number;
  /** Memories of the filter, as the run last counted them. */
  total: number;
  /** Vectors this run wrote. */
  written: number;
  startedAt: Date;
  /** The run's last write: progress, or its heartbeat. */
  updatedAt: Date;
  /** When the run ended (stopped or complete); null while it runs. */
  finishedAt: Date | null;
}

/** What a run writes as it goes: its counts, and when it ends its state. */
export type ReindexProgressUpdate = Pick<ReindexProgressRecord, 'state' | 'stopReason' | 'done' | 'total' | 'written' | 'updatedAt' | 'finishedAt'>;

export interface ReindexProgressRepository {
  /** Makes `record` the store's last run, replacing the one recorded before (if any). */
  start(record: ReindexProgressRecord): Promise<void>;
  /**
   * Writes run `runId`'s progress when it is still the store's last run; false (nothing written) when another run
   * has been started since.
   */
  update(runId: string, update: ReindexProgressUpdate): Promise<boolean>;
  /** The store's last run, or null when none was ever recorded. */
  latest(): Promise<ReindexProgressRecord | null>;
}
