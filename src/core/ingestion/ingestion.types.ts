import type { NewEvent } from '../events/event.types.ts';
import type { Scope } from '../scope.ts';

/**
 * Ingestion: a conversation in, memories out (docs/ingestion.md). A job is stored, leased by one node's worker at a
 * time (the webhook outbox's pattern), and ends with proposals applied at once (`auto`) or waiting for a person
 * (`review`).
 */
export type IngestionMode = 'extract' | 'raw';
export type IngestionPolicy = 'review' | 'auto';

/**
 * - `queued`: waiting for a worker (also after a lost lease: a crashed node's job comes back here by its lease);
 * - `running`: a worker holds its lease and is extracting (or applying);
 * - `pending_review`: proposals wait for a person's decisions;
 * - `completed`: every proposal is decided and the approved ones are written;
 * - `failed`: the job ended without writing anything (`error` says why).
 */
export type IngestionState = 'queued' | 'running' | 'pending_review' | 'completed' | 'failed';

export const INGEST_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export type IngestRole = (typeof INGEST_ROLES)[number];

export interface IngestMessage {
  role: IngestRole;
  content: string;
  timestamp: Date | null;
}

/** add: a new memory; supersede: a new memory replacing `supersedes`; skip: a duplicate of `duplicateOf` (nothing written). */
export type ProposalAction = 'add' | 'supersede' | 'skip';

/**
 * - `pending`: waits for a decision (policy `review`);
 * - `approved`: decided, being written (the job is `running` until it is);
 * - `rejected`: decided against, nothing written;
 * - `applied`: written (`memoryId`);
 * - `skipped`: a duplicate the model found (action `skip`): nothing to decide or write.
 */
export type ProposalStatus = 'pending' | 'approved' | 'rejected' | 'applied' | 'skipped';

export interface Proposal {
  /** `p1`, `p2`, … in the job's order. */
  id: string;
  action: ProposalAction;
  /** The memory's text (for `skip`, the fact the model judged already known). */
  content: string;
  /** Ids of the memories it replaces (action `supersede`), each one of the candidates the model was shown. */
  supersedes: string[];
  /** The existing memory it duplicates (action `skip`). */
  duplicateOf: string | null;
  /** Positions (0-based) of the messages the fact came from. */
  sources: number[];
  /** The model's one-line reason, when it gave one. */
  reason: string | null;
  status: ProposalStatus;
  /** The memory written for it (status `applied`). */
  memoryId: string | null;
  /** The API key that decided it, and when (policy `review`); for `auto`, the job's own key. */
  decidedBy: string | null;
  decidedAt: Date | null;
  /**
   * True once the memory written for it was forgotten: its `content` and its source messages' contents are then
   * blank (docs/ingestion.md, "Forgetting"). Absent otherwise.
   */
  forgotten?: boolean;
}

export interface IngestionUsage {
  /** The model configured when the job ran (`MNEMO_LLM_MODEL`); null for `raw`. */
  model: string | null;
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
}

export interface IngestionError {
  code: string;
  message: string;
}

export interface IngestionJob {
  /** `ing_…` */
  id: string;
  scope: Scope;
  /** The key (and its user) that asked: it can never approve the job's proposals. */
  requestedBy: { keyId: string; userId: string };
  mode: IngestionMode;
  policy: IngestionPolicy;
  state: IngestionState;
  messages: IngestMessage[];
  /** Merged into each written memory's metadata, as `tags` into its tags. */
  metadata: Record<string, unknown>;
  tags: string[];
  proposals: Proposal[];
  error: IngestionError | null;
  usage: IngestionUsage;
  /** The prompts' version (core/ingestion/prompts.ts) the proposals came from; null for `raw`. */
  promptVersion: string | null;
  /** Leases taken so far (a job whose worker died is taken again, up to a bound). */
  attempts: number;
  /** Goes up by one on every save: review decisions are saved only over the revision they read. */
  revision: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** A job leased to one worker until `leaseUntil`; `lease` must be shown to save it. */
export interface LeasedIngestion {
  job: IngestionJob;
  lease: string;
  leaseUntil: Date;
}

/** What a worker or a review saves over a job (with the events it emits, in the same transaction). */
export interface IngestionUpdate {
  state: IngestionState;
  proposals: Proposal[];
  usage: IngestionUsage;
  error: IngestionError | null;
  promptVersion: string | null;
  updatedAt: Date;
  finishedAt: Date | null;
  events?: readonly NewEvent[];
}
