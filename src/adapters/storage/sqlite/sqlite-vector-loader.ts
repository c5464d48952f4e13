import type { Worker } from 'node:worker_threads';
import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import {
  joinParts, planLoad, readScopeRows, scopeVectorStats, type FilledPart, type ScopeRows,
} from './sqlite-vector-rows.ts';
import type { LoadJob } from './sqlite-vector-load-worker.ts';
import { startWorker } from './vector-scan/start-worker.ts';

/** Below this many floats (about 2,000 rows of 512 dims, a few milliseconds) a workspace loads on the event loop. */
export const WORKER_LOAD_ABOVE = 1 << 20;
const LOADER_YOUNG_GENERATION_MB = 1;

/**
 * Loads a workspace's vectors of one model as matrix rows. A big workspace of a store file is read by loader threads
 * (one, or two splitting its seq range: `threads`), each on its own read-only connection, straight into matrix rows
 * allocated here once for the count (fillRows): the event loop stays free, and nothing of the load (row objects, BLOB
 * copies, SQLite pages) lands on the server's heap. Small workspaces and in-memory stores (which another connection
 * cannot open) are read here, in one go. Should a thread fail (it cannot open the file, it dies), the workspace is
 * read here instead.
 */
export class SqliteVectorLoader {
  /** Loader threads started so far (for tests). */
  workerLoads = 0;
  private readonly stats;
  private readonly workers = new Set<Worker>();
  private closed = false;

  constructor(private readonly db: SqliteDb, private readonly options: { workerAbove?: number; threads?: number } = {}) {
    this.stats = scopeVectorStats(db);
  }

  async load(scope: Scope, modelId: string, dims: number): Promise<ScopeRows> {
    if (this.closed) throw new Error('the vector loader is closed');
    if (this.db.memory) return readScopeRows(this.db, scope, modelId, dims);
    const { n, lo, hi } = this.stats.get(scope.tenantId, scope.mode, scope.workspace, modelId)!;
    if (n * dims < (this.options.workerAbove ?? WORKER_LOAD_ABOVE) || lo === null || hi === null) {
      return readScopeRows(this.db, scope, modelId, dims);
    }
    try {
      return await this.inWorkers(scope, modelId, dims, n, lo, hi);
    } catch (err) {
      if (this.closed) throw err;
      return readScopeRows(this.db, scope, modelId, dims);
    }
  }

  /** Ends loads in flight (their callers get an error). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.terminate()));
  }

  /** `planned` rows between seqs lo and hi when planned, filled by one or two threads (planLoad). */
  private async inWorkers(scope: Scope, modelId: string, dims: number, planned: number, lo: number, hi: number): Promise<ScopeRows> {
    const { rows, ranges, targets } = planLoad(dims, planned, lo, hi, this.options.threads ?? 1);
    const parts = await Promise.all(ranges.map((range, i) =>
      this.inWorker({ file: this.db.name, scope, modelId, dims, range, target: targets[i]! })));
    const count = joinParts(dims, targets[0]!, parts[0]!.inPlanned, parts[1]?.inPlanned ?? 0);
    // Two snapshots may differ: the older version makes any write between them (unless replayed as this process's
    // own) force a reload. Rows left out force one too.
    const version = parts.some((p) => p.truncated) ? -1 : Math.min(...parts.map((p) => p.version));
    return { rows, count, version };
  }

  private inWorker(job: LoadJob): Promise<FilledPart> {
    this.workerLoads++;
    const worker = startWorker(new URL('./sqlite-vector-load-worker.ts', import.meta.url),
      new URL('./sqlite-vector-load-worker.js', import.meta.url), {
        workerData: job, external: ['better-sqlite3'],
        // A small young generation collects each row's BLOB copy soon: the thread's malloc arena, which outlives
        // it, stays small.
        resourceLimits: { maxYoungGenerationSizeMb: LOADER_YOUNG_GENERATION_MB },
      });
    this.workers.add(worker);
    return new Promise<FilledPart>((resolve, reject) => {
      let result: FilledPart | null = null;
      worker.once('message', (part: FilledPart) => { result = part; });
      worker.once('error', reject);
      worker.once('exit', (code) => {
        this.workers.delete(worker);
        if (result) resolve(result);
        else reject(new Error(`a vector load thread exited with code ${code} before answering`));
      });
    });
  }
}
