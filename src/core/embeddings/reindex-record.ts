import type { Clock } from '../clock.ts';
import { newUuid } from '../ids.ts';
import type { MemoryMaintenance, ScopeFilter } from '../memories/memory-maintenance.ts';
import type { Embedder } from './embedder.port.ts';
import type {
  ReindexProgressRecord, ReindexProgressRepository, ReindexRunState, ReindexStopReason,
} from './reindex-progress.repository.ts';
import { reindexMemories, type ReindexOptions, type ReindexProgress, type ReindexResult } from './reindex.ts';

/**
 * A reindex run writing its progress record (reindex-progress.repository.ts) as it goes, so that `/health` on any
 * node sees it: at its start, at most once a second as batches are written, on a heartbeat while a batch is being
 * embedded, and at its end. A process that dies without saying so (kill -9, a crash, the machine) leaves `running`
 * behind; its heartbeat then ages, and a reader shows the run as stopped once it is older than
 * REINDEX_STALE_AFTER_MS.
 */

/** How often a running reindex proves it is alive, even while one slow embedder call is under way. */
export const REINDEX_HEARTBEAT_MS = 5_000;
/**
 * A `running` record not written for this long is read as stopped (`no_heartbeat`): six heartbeats missed, which
 * also absorbs a few seconds of clock difference between the machine running the reindex and the one reading.
 */
export const REINDEX_STALE_AFTER_MS = 30_000;
/** Progress is written at most this often (a batch is one transaction; a record write per batch would double them). */
export const REINDEX_PROGRESS_EVERY_MS = 1_000;

/** The state a reader shows: a `running` record whose heartbeat is too old is a run that died. */
export function reindexRunView(record: ReindexProgressRecord, now: Date, staleAfterMs = REINDEX_STALE_AFTER_MS):
  { state: ReindexRunState; stopReason: ReindexStopReason | 'no_heartbeat' | null } {
  if (record.state === 'running' && now.getTime() - record.updatedAt.getTime() > staleAfterMs) {
    return { state: 'stopped', stopReason: 'no_heartbeat' };
  }
  return { state: record.state, stopReason: record.stopReason };
}

export interface ReindexRecordTiming {
  heartbeatMs?: number;
  progressEveryMs?: number;
}

export interface ReindexRecorder {
  readonly runId: string;
  /** Notes the run's counts; written when the last write is at least `progressEveryMs` old (or by the heartbeat). */
  progress(p: ReindexProgress): void;
  /** The run ended with `result`; `interrupted`: because it was asked to stop (its signal). */
  finish(result: ReindexResult, interrupted: boolean): Promise<void>;
  /** The run ended with an error: recorded as stopped (`failed`) with its last counts. */
  fail(): Promise<void>;
}

/** Records a new run as the store's last one (`running`, nothing counted yet) and returns its recorder. */
export async function startReindexRecord(records: ReindexProgressRepository, clock: Clock,
  run: { modelId: string; dims: number; filter: ScopeFilter }, timing: ReindexRecordTiming = {}): Promise<ReindexRecorder> {
  const heartbeatMs = timing.heartbeatMs ?? REINDEX_HEARTBEAT_MS;
  const progressEveryMs = timing.progressEveryMs ?? REINDEX_PROGRESS_EVERY_MS;
  const runId = newUuid();
  const startedAt = clock.now();
  await records.start({
    runId, modelId: run.modelId, dims: run.dims, filter: run.filter, state: 'running', stopReason: null,
    done: 0, total: 0, written: 0, startedAt, updatedAt: startedAt, finishedAt: null,
  });
  let counts: ReindexProgress = { done: 0, total: 0, written: 0 };
  let lastWrite = startedAt.getTime();
  // The first counts (before any batch) are written at once: a reader sees the total as soon as it is known.
  let counted = false;
  // Set when another run has replaced this one's record: nothing more is written for this run.
  let superseded = false;
  // Writes go one after another, so a late heartbeat never overwrites the end state.
  let chain: Promise<void> = Promise.resolve();
  const write = (end: { state: ReindexRunState; stopReason: ReindexStopReason | null } | null): Promise<void> => {
    const at = clock.now();
    lastWrite = at.getTime();
    const snapshot = { ...counts };
    const next = chain.then(async () => {
      if (superseded) return;
      const applied = await records.update(runId, {
        state: end?.state ?? 'running', stopReason: end?.stopReason ?? null, ...snapshot, updatedAt: at,
        finishedAt: end ? at : null,
      });
      if (!applied) superseded = true;
    });
    // A failed progress write is not the run's failure (its own writes to the same store will show that); the end
    // write's failure is returned to whoever awaits it.
    chain = next.catch(() => undefined);
    return next;
  };
  const heartbeat = setInterval(() => { void write(null).catch(() => undefined); }, heartbeatMs);
  heartbeat.unref();
  const end = async (state: ReindexRunState, stopReason: ReindexStopReason | null) => {
    clearInterval(heartbeat);
    await write({ state, stopReason });
  };
  return {
    runId,
    progress(p) {
      counts = { done: p.done, total: p.total, written: p.written };
      if (!counted || clock.now().getTime() - lastWrite >= progressEveryMs) void write(null).catch(() => undefined);
      counted = true;
    },
    async finish(result, interrupted) {
      counts = { done: result.done, total: result.total, written: result.written };
      if (result.state === 'complete') return end('complete', null);
      if (result.state === 'limited') return end('stopped', 'limit');
      return end('stopped', interrupted ? 'interrupted' : 'unfinished');
    },
    async fail() {
      await end('stopped', 'failed');
    },
  };
}

export interface RecordedReindexDeps {
  memories: MemoryMaintenance;
  records: ReindexProgressRepository;
  clock: Clock;
  embedder: Embedder;
  textOf: (title: string, content: string) => string;
}

/** `reindexMemories` with its progress record: what `mnemo reindex` runs. */
export async function reindexWithRecord(deps: RecordedReindexDeps, options: ReindexOptions & { timing?: ReindexRecordTiming }): Promise<ReindexResult> {
  const recorder = await startReindexRecord(deps.records, deps.clock,
    { modelId: deps.embedder.modelId, dims: deps.embedder.dimensions, filter: options.filter }, options.timing);
  let result: ReindexResult;
  try {
    result = await reindexMemories(deps.memories, deps.embedder, deps.textOf, {
      ...options,
      onProgress: (p) => {
        recorder.progress(p);
        options.onProgress?.(p);
      },
    });
  } catch (err) {
    // The run's error is what the caller needs; a store that also refuses the record's last write adds nothing.
    await recorder.fail().catch(() => undefined);
    throw err;
  }
  await recorder.finish(result, options.signal?.aborted ?? false);
  return result;
}
