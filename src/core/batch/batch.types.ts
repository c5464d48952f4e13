import type { DomainError } from '../errors.ts';
import type { Memory, MemoryFilter, MemoryPatch, NewMemoryInput } from '../memories/memory.types.ts';
import type { ScoredHit } from '../search/search.service.ts';
import type { ValidityOption } from '../memories/validity.ts';

export const MAX_BATCH_OPERATIONS = 100;
export const MAX_BATCH_TIMEOUT_MS = 60_000;
export const DEFAULT_BATCH_TIMEOUT_MS = 30_000;
/** How many operations of a parallel batch run at once. */
export const BATCH_CONCURRENCY = 8;

export type BatchOpType = 'create' | 'read' | 'update' | 'delete' | 'search';

/** One operation as the surface understood it, or why it could not (validated on its own). */
export type BatchOp =
  | { type: 'create'; input: NewMemoryInput }
  | { type: 'read'; id: string }
  | { type: 'update'; id: string; patch: MemoryPatch }
  | { type: 'delete'; id: string }
  | { type: 'search'; query: string; limit: number; threshold: number; filter: MemoryFilter; validity?: ValidityOption | undefined }
  | { type: BatchOpType | string; invalid: DomainError };

export interface BatchOptions {
  continueOnError: boolean;
  maxRetries: number;
  timeoutMs: number;
  parallel: boolean;
  validateOnly: boolean;
  /** Beyond the spec: every write commits in one transaction, or none does. */
  atomic: boolean;
}

/**
 * Codes a batch adds to the domain's: an operation that never ran because an earlier one failed
 * (continue_on_error false), one undone because another failed in an atomic batch, one that could not start
 * before the batch's deadline.
 */
export type BatchFailureCode = 'NOT_EXECUTED' | 'ROLLED_BACK' | 'BATCH_TIMEOUT';

export type OpValue =
  | { kind: 'created'; memory: Memory }
  | { kind: 'read'; memory: Memory }
  | { kind: 'updated'; memory: Memory }
  | { kind: 'deleted'; id: string; deletedAt: Date }
  | { kind: 'searched'; hits: ScoredHit[]; total: number }
  | { kind: 'valid' };

export type OpOutcome =
  | { index: number; type: string; status: 'success'; value: OpValue; attempts: number }
  | { index: number; type: string; status: 'failed'; error: DomainError | { code: BatchFailureCode; message: string }; attempts: number };

export interface BatchOutcome {
  outcomes: OpOutcome[];
  executionMs: number;
}
