import type { Scope } from '../scope.ts';
import type { IngestionJob, IngestionState, IngestionUpdate, LeasedIngestion } from './ingestion.types.ts';

export interface IngestionListQuery {
  state?: IngestionState | undefined;
  limit: number;
  offset: number;
}

/**
 * The stored ingestion jobs (table `ingestions`). Reads take the caller's scope; the worker's calls (claim, renew,
 * finish) go by id and lease, as the webhook outbox's do.
 */
export interface IngestionRepository {
  /** Stores a new job (state `queued`, revision 0). */
  insert(job: IngestionJob): Promise<void>;
  find(scope: Scope, id: string): Promise<IngestionJob | null>;
  /** Newest first. */
  list(scope: Scope, query: IngestionListQuery): Promise<{ items: IngestionJob[]; total: number }>;
  /** Jobs of the tenant (both modes, every workspace) that are `queued` or `running`. */
  countActive(tenantId: string): Promise<number>;
  /**
   * Leases the oldest job that is `queued`, or `running` with its lease expired (its worker died), whose tenant has
   * fewer than `perTenant` jobs under an unexpired lease: state `running`, a new lease token, `attempts` + 1,
   * `leaseUntil = now + leaseMs`, `updatedAt = now`, and `revision` + 1 (a review that read the job before it was
   * taken can no longer save over it). Atomic across nodes: two claimers never get the same job, nor a tenant's last
   * slot. Null when none is due (or, rarely, when concurrent claimers kept taking the slots it found: ask again).
   */
  claimNext(now: Date, leaseMs: number, perTenant: number): Promise<LeasedIngestion | null>;
  /**
   * Moves the lease to `until` when `lease` still holds it (even past its end, if no one took the job meanwhile);
   * false when it was lost (taken again, or cleared by a save).
   */
  renew(id: string, lease: string, until: Date): Promise<boolean>;
  /**
   * Saves the worker's result and clears the lease when `lease` still holds it (false otherwise: nothing saved), with
   * `update.events` appended (and fanned out to webhooks) in the same transaction. `revision` goes up by one.
   */
  finish(id: string, lease: string, update: IngestionUpdate): Promise<boolean>;
  /**
   * Saves a review (decisions, then the write's outcome) when the job is still at `revision` (false otherwise:
   * someone saved in between). `lease`, when given, is taken (until `leaseUntil`) so that a crash before the approved
   * proposals are written hands them to a worker; null clears it. Events as in `finish`.
   */
  saveReview(scope: Scope, id: string, revision: number, update: IngestionUpdate,
    lease: { token: string; until: Date } | null): Promise<boolean>;
  /**
   * Deletes the finished jobs (`completed`, `failed`) of every scope that finished before `olderThan`; answers how
   * many. Jobs still queued, running or waiting for review are kept, however old.
   */
  pruneFinished(olderThan: Date): Promise<number>;
}
