import type { Clock } from '../clock.ts';
import type { IngestionRepository } from './ingestion.repository.ts';
import type { IngestionService } from './ingestion.service.ts';
import type { IngestionUpdate, LeasedIngestion } from './ingestion.types.ts';

/** pino's calling convention, so the server's logger fits. */
export interface IngestionLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface IngestionWorkerOptions {
  /** Jobs this node runs at once. */
  concurrency?: number;
  /** How long a claim is exclusive; renewed every third of it while the job runs. A dead node's job waits this long. */
  leaseMs?: number;
  /** Leases a job may take; a job whose workers keep dying is then failed (`abandoned`) instead of taken again. */
  maxAttempts?: number;
  /** How often it looks for due jobs besides being woken by a new one (another node's jobs, expired leases). */
  pollMs?: number;
}

export interface IngestionWorker {
  /** Claims and runs due jobs until none is left; returns how many it ran. */
  drain(): Promise<number>;
  /** Runs jobs continuously: woken by `wake()` and by a timer. */
  start(options?: { logger?: IngestionLogger }): void;
  /** Wakes the worker (a job was queued on this node). */
  wake(): void;
  /** Stops claiming and aborts the jobs in flight (their leases lapse and another node, or the next start, takes them). */
  stop(): Promise<void>;
}

const silent: IngestionLogger = { info() {}, warn() {} };

/**
 * Runs ingestion jobs from the store, as the webhook delivery worker runs deliveries: a job is leased to one node,
 * the lease is renewed while it runs, and a node that dies (SIGKILL included) only delays its jobs — their leases
 * lapse and any node takes them again. Correctness lives in the store (claims, leases, revisions); timers only wake.
 */
export function createIngestionWorker(deps: {
  ingestions: Pick<IngestionRepository, 'claimNext' | 'renew' | 'finish' | 'saveReview'>;
  service: Pick<IngestionService, 'process'>;
  clock: Clock;
  /** Jobs of one tenant running at once, over all nodes. */
  tenantConcurrency: number;
  options?: IngestionWorkerOptions;
}): IngestionWorker {
  const { ingestions, clock } = deps;
  const concurrency = deps.options?.concurrency ?? 2;
  const leaseMs = deps.options?.leaseMs ?? 60_000;
  const maxAttempts = deps.options?.maxAttempts ?? 3;
  const pollMs = deps.options?.pollMs ?? 1_000;
  let log: IngestionLogger = silent;
  const inFlight = new Map<Promise<void>, AbortController>();
  let running = false;
  let timer: ReturnType<typeof setInterval> | null = null;

  const until = () => new Date(clock.now().getTime() + leaseMs);

  /** Runs one leased job to its end; never rejects. */
  async function run(leased: LeasedIngestion, abort: AbortController): Promise<void> {
    const { job, lease } = leased;
    const ids = { ingestion: job.id, attempt: job.attempts };
    const renewal = setInterval(() => {
      void ingestions.renew(job.id, lease, until()).then((held) => {
        if (!held) abort.abort(new Error('lease lost'));
      }, () => undefined);
    }, Math.max(50, Math.floor(leaseMs / 3)));
    renewal.unref?.();
    try {
      let update: IngestionUpdate;
      if (job.attempts > maxAttempts) {
        const now = clock.now();
        update = {
          state: 'failed', proposals: job.proposals, usage: job.usage, promptVersion: job.promptVersion, updatedAt: now, finishedAt: now,
          error: { code: 'abandoned', message: `The job was taken ${maxAttempts} times and never finished (its node stopped each time)` },
        };
      } else {
        let revision = job.revision;
        update = await deps.service.process(leased, abort.signal, async (checkpoint) => {
          if (!await ingestions.saveReview(job.scope, job.id, revision, checkpoint, { token: lease, until: until() })) {
            throw new Error('ingestion changed under its lease');
          }
          revision++;
        });
      }
      if (abort.signal.aborted) return;
      if (await ingestions.finish(job.id, lease, update)) {
        log.info({ ...ids, state: update.state, proposals: update.proposals.length, model_calls: update.usage.modelCalls, error: update.error?.code }, 'ingestion finished');
      } else {
        log.warn(ids, 'ingestion lease lost before its result was saved; another node runs it');
      }
    } catch (err) {
      // Aborted (stopping, lease lost) or storage trouble: the lease lapses and the job is taken again.
      if (!abort.signal.aborted) log.warn({ ...ids, err: String(err) }, 'ingestion interrupted; it will be taken again');
    } finally {
      clearInterval(renewal);
    }
  }

  /** Claims one due job and starts it; `running` settles when it ends (wrapped: an async function would await it). */
  async function claimOne(): Promise<{ running: Promise<void> } | null> {
    const leased = await ingestions.claimNext(clock.now(), leaseMs, deps.tenantConcurrency);
    if (!leased) return null;
    const abort = new AbortController();
    const p = run(leased, abort);
    inFlight.set(p, abort);
    void p.finally(() => {
      inFlight.delete(p);
      if (running) void pump();
    });
    return { running: p };
  }

  let pumping: Promise<void> | null = null;
  let again = false;
  function pump(): Promise<void> {
    if (!running) return Promise.resolve();
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = (async () => {
      try {
        do {
          again = false;
          while (running && inFlight.size < concurrency && await claimOne());
        } while (again && running);
      } catch (err) {
        log.warn({ err: String(err) }, 'ingestions could not be claimed');
      }
    })().finally(() => { pumping = null; });
    return pumping;
  }

  return {
    async drain() {
      let ran = 0;
      for (;;) {
        const batch: Promise<void>[] = [];
        while (batch.length < concurrency) {
          const claimed = await claimOne();
          if (!claimed) break;
          batch.push(claimed.running);
        }
        if (batch.length === 0) return ran;
        await Promise.all(batch);
        ran += batch.length;
      }
    },

    start(options = {}) {
      if (running) return;
      if (options.logger) log = options.logger;
      running = true;
      timer = setInterval(() => void pump(), pollMs);
      timer.unref?.();
      void pump();
    },

    wake() {
      void pump();
    },

    async stop() {
      running = false;
      if (timer) clearInterval(timer);
      timer = null;
      await pumping;
      for (const abort of inFlight.values()) abort.abort(new Error('stopping'));
      await Promise.allSettled([...inFlight.keys()]);
    },
  };
}
