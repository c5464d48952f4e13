import type { Principal } from '../api-keys/api-key.types.ts';
import type { Clock } from '../clock.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { AtomicStepFailed, type AtomicStep, type MemoryRepository } from '../memories/memory.repository.ts';
import type { MemoryService } from '../memories/memory.service.ts';
import type { LimitsService } from '../rate-limit/tier-limits.ts';
import type { Scope } from '../scope.ts';
import type { SearchService } from '../search/search.service.ts';
import { memoryDeleted } from '../events/memory-events.ts';
import type { OperationName } from '../operations/catalog.ts';
import { authorize } from '../operations/runner.ts';
import { chargeQuota } from '../operations/quota.ts';
import {
  BATCH_CONCURRENCY, type BatchFailureCode, type BatchOp, type BatchOptions, type BatchOutcome, type OpOutcome, type OpValue,
} from './batch.types.ts';

/** Failures worth another attempt (max_retries): the model or a deadline, never a bad request or a missing id. */
const RETRYABLE = new Set(['EMBEDDING_FAILED', 'TIMEOUT']);
/** The operation each kind of batch entry runs: a batch needs the permission of every operation it holds. */
const OPERATION_OF: Partial<Record<string, OperationName>> = {
  create: 'memory.create', read: 'memory.read', update: 'memory.update', delete: 'memory.delete', search: 'memory.search',
};

export type BatchService = ReturnType<typeof createBatchService>;

/**
 * Many memory operations in one request (G6). Results always come back in input order.
 * - continue_on_error false: operations run one after another in order; after the first failure the rest are
 *   not run (NOT_EXECUTED). `parallel` applies only when continue_on_error is true.
 * - validate_only: every operation is checked (fields, ids, rules) and nothing runs.
 * - timeout: no operation starts after the deadline (BATCH_TIMEOUT); one already running finishes and reports
 *   its real outcome, so no write is ever half-done or reported wrongly.
 * - atomic: every operation is prepared first (validation, ids, embeddings), then all writes and reads run in
 *   one transaction; one failure undoes all (the others report ROLLED_BACK). Searches are not allowed there.
 */
export function createBatchService(deps: {
  memories: MemoryService;
  search: Pick<SearchService, 'semantic'>;
  store: Pick<MemoryRepository, 'applyAtomically'>;
  limits: Pick<LimitsService, 'memoryWrite' | 'batch'>;
  clock: Clock;
}) {
  const { memories, search, store, limits, clock } = deps;

  async function execute(principal: Principal, scope: Scope, op: BatchOp): Promise<OpValue> {
    if ('invalid' in op) throw op.invalid;
    // Each write counts the memory-write quota inside the memory service.
    switch (op.type) {
      case 'create': return { kind: 'created', memory: await memories.create(scope, principal, op.input) };
      case 'read': return { kind: 'read', memory: await memories.get(scope, op.id) };
      case 'update': return { kind: 'updated', memory: await memories.update(scope, principal, op.id, op.patch) };
      case 'delete': {
        const { id, deletedAt } = await memories.delete(scope, principal, op.id, 'batch');
        return { kind: 'deleted', id, deletedAt };
      }
      case 'search': {
        const { hits, total } = await search.semantic({ scope, userId: principal.userId, surface: 'g6' },
          { query: op.query, limit: op.limit, threshold: op.threshold, filter: op.filter, validity: op.validity });
        return { kind: 'searched', hits, total };
      }
    }
    throw new DomainError('VALIDATION_FAILED', 'Unknown operation type');
  }

  /** Runs one operation with up to `maxRetries` further attempts on retryable failures. */
  async function attempt(principal: Principal, scope: Scope, op: BatchOp, index: number, maxRetries: number): Promise<OpOutcome> {
    for (let attempts = 1; ; attempts++) {
      try {
        return { index, type: op.type, status: 'success', value: await execute(principal, scope, op), attempts };
      } catch (err) {
        if (!isDomainError(err)) throw err;
        if (attempts > maxRetries || !RETRYABLE.has(err.code)) return { index, type: op.type, status: 'failed', error: err, attempts };
      }
    }
  }

  const failed = (index: number, op: BatchOp, code: BatchFailureCode, message: string, attempts = 0): OpOutcome =>
    ({ index, type: op.type, status: 'failed', error: { code, message }, attempts });

  function validate(op: BatchOp, index: number, scope: Scope): Promise<OpOutcome> {
    return (async () => {
      try {
        if ('invalid' in op) throw op.invalid;
        switch (op.type) {
          case 'create': memories.validateCreate(op.input); break;
          case 'update': memories.validateUpdate(op.patch); await memories.find(scope, op.id); break;
          case 'read': case 'delete': await memories.find(scope, op.id); break;
          case 'search':
            if (op.query.trim().length === 0) throw new DomainError('VALIDATION_FAILED', 'query must not be empty', { fields: [{ field: 'query', reason: 'empty', message: 'must not be empty' }] });
            break;
        }
        return { index, type: op.type, status: 'success', value: { kind: 'valid' }, attempts: 0 } satisfies OpOutcome;
      } catch (err) {
        if (!isDomainError(err)) throw err;
        return { index, type: op.type, status: 'failed', error: err, attempts: 0 } satisfies OpOutcome;
      }
    })();
  }

  async function runAtomic(principal: Principal, scope: Scope, ops: readonly BatchOp[], deadline: number): Promise<OpOutcome[]> {
    const steps: AtomicStep[] = [];
    /** The operation each step belongs to (a create that supersedes adds steps of its own). */
    const opOfStep: number[] = [];
    /** Each operation's own step (its result). */
    const stepOfOp: number[] = [];
    const push = (op: number, ...added: AtomicStep[]) => {
      stepOfOp[op] = steps.length;
      for (const step of added) { steps.push(step); opOfStep.push(op); }
    };
    const fail = (index: number, error: DomainError | { code: BatchFailureCode; message: string }) =>
      ops.map((op, i): OpOutcome => (i === index ? { index: i, type: op.type, status: 'failed', error, attempts: 1 }
        : failed(i, op, 'ROLLED_BACK', 'Not applied: another operation of this atomic batch failed')));
    for (const [i, op] of ops.entries()) {
      if (clock.now().getTime() >= deadline) return fail(i, { code: 'BATCH_TIMEOUT', message: 'The batch timed out before this operation could start' });
      try {
        if ('invalid' in op) throw op.invalid;
        // Atomic writes are prepared here, not run through the memory service: their quota is counted here.
        if (op.type === 'create' || op.type === 'update' || op.type === 'delete') await chargeQuota(limits, OPERATION_OF[op.type]!, principal);
        switch (op.type) {
          case 'create': {
            const { memory, vector, events } = await memories.prepareCreate(scope, principal.userId, op.input);
            const supersession = op.input.supersedes?.length
              ? await memories.supersedeSteps(scope, principal.userId, memory, op.input.supersedes, memory.createdAt) : [];
            push(i, { kind: 'insert', memory, vector, events }, ...supersession);
            break;
          }
          case 'update': {
            const p = await memories.prepareUpdate(scope, principal.userId, op.id, op.patch);
            push(i, { kind: 'update', id: p.id, patch: p.patch, at: p.at, by: p.actorId, vector: p.vector, events: p.events });
            break;
          }
          case 'read': push(i, { kind: 'read', id: await memories.resolveId(scope, op.id), at: clock.now() }); break;
          case 'delete': {
            const at = clock.now();
            push(i, {
              kind: 'delete', id: await memories.resolveId(scope, op.id), deletion: { at, by: principal.userId, reason: 'batch' },
              events: (m) => [memoryDeleted(m, at, principal.userId, 'batch')],
            });
            break;
          }
          default:
            throw new DomainError('VALIDATION_FAILED', 'search operations cannot run in an atomic batch', { fields: [{ field: 'type', reason: 'not_allowed', message: 'search is not allowed when atomic is true' }] });
        }
      } catch (err) {
        if (!isDomainError(err)) throw err;
        return fail(i, err);
      }
    }
    let applied;
    try {
      applied = await store.applyAtomically(scope, steps);
    } catch (err) {
      if (err instanceof AtomicStepFailed) return fail(opOfStep[err.index]!, err.error);
      throw err;
    }
    const deletedAt = clock.now();
    return ops.map((op, i): OpOutcome => {
      const memory = applied[stepOfOp[i]!]!;
      const value: OpValue = op.type === 'create' ? { kind: 'created', memory }
        : op.type === 'update' ? { kind: 'updated', memory }
        : op.type === 'read' ? { kind: 'read', memory }
        : { kind: 'deleted', id: memory.id, deletedAt };
      return { index: i, type: op.type, status: 'success', value, attempts: 1 };
    });
  }

  return {
    /**
     * Admits a batch before any of its operations runs: PERMISSION_DENIED unless the caller may run every operation
     * it holds, then the batch request limit (RATE_LIMITED).
     */
    async admit(principal: Principal, ops: readonly Pick<BatchOp, 'type'>[]): Promise<void> {
      for (const type of new Set(ops.map((op) => op.type))) {
        const operation = OPERATION_OF[type];
        // An entry of no known type fails on its own (INVALID_OPERATION) and needs nothing.
        if (operation !== undefined) authorize(operation, principal);
      }
      await chargeQuota(limits, 'batch.run', principal);
    },

    async run(principal: Principal, scope: Scope, ops: readonly BatchOp[], options: BatchOptions): Promise<BatchOutcome> {
      const started = performance.now();
      const deadline = clock.now().getTime() + options.timeoutMs;
      const expired = () => clock.now().getTime() >= deadline;
      const timedOut = (i: number, op: BatchOp) => failed(i, op, 'BATCH_TIMEOUT', 'The batch timed out before this operation could start');
      let outcomes: OpOutcome[];

      if (options.validateOnly) {
        outcomes = await Promise.all(ops.map((op, i) => validate(op, i, scope)));
      } else if (options.atomic) {
        outcomes = await runAtomic(principal, scope, ops, deadline);
      } else if (!options.continueOnError || !options.parallel) {
        outcomes = [];
        let stopped = false;
        for (const [i, op] of ops.entries()) {
          if (stopped) outcomes.push(failed(i, op, 'NOT_EXECUTED', 'Not run: an earlier operation failed and continue_on_error is false'));
          else if (expired()) outcomes.push(timedOut(i, op));
          else {
            const outcome = await attempt(principal, scope, op, i, options.maxRetries);
            outcomes.push(outcome);
            if (outcome.status === 'failed' && !options.continueOnError) stopped = true;
          }
        }
      } else {
        outcomes = new Array<OpOutcome>(ops.length);
        let next = 0;
        const worker = async () => {
          while (next < ops.length) {
            const i = next++;
            const op = ops[i]!;
            outcomes[i] = expired() ? timedOut(i, op) : await attempt(principal, scope, op, i, options.maxRetries);
          }
        };
        await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, ops.length) }, worker));
      }
      return { outcomes, executionMs: performance.now() - started };
    },
  };
}
