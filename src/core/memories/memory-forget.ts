import type { Principal } from '../api-keys/api-key.types.ts';
import type { Clock } from '../clock.ts';
import { validationError } from '../errors.ts';
import { memoryDeleted } from '../events/memory-events.ts';
import { chargeQuota, type QuotaLimits } from '../operations/quota.ts';
import type { Scope } from '../scope.ts';
import { AtomicStepFailed, type AtomicStep, type MemoryStore } from './memory.repository.ts';
import { hasMemoryFilter, type MemoryFilter } from './memory.types.ts';

/**
 * Forgetting by filter (docs/api.md, "Forgetting"): every memory of a workspace that a filter matches is deleted in
 * one transaction — the rows, vectors, tags, keyword postings and kept versions go, a tombstone stays
 * (`reason: forget`), and what each left elsewhere (its stored events, deliveries' answers) keeps its id only
 * (MemoryStore.delete). A dry run previews what would go.
 *
 * - An empty filter is refused (VALIDATION_FAILED on `filter`): forgetting a whole workspace by leaving the filter
 *   out must not be possible. A caller who means it names a filter that matches everything (a date range from
 *   1970), on purpose.
 * - The filter is G3's (types, tags any/all, metadata, creation dates) and matches every memory, whatever its
 *   validity: superseded and expired memories are forgotten too.
 * - At most MAX_FORGET_PER_CALL memories per call: a filter matching more is refused (VALIDATION_FAILED, reason
 *   `too_many`) and nothing is deleted — narrow it (by date, say) and forget in several calls. The one transaction
 *   holds the store's write lock (SQLite: every other write of the server waits), about 1.5 ms per memory on SQLite
 *   with 6,000 memories in the workspace (RELIABILITY.md, "Forgetting"): 1,000 keep that wait near a second or two,
 *   where 10,000 took 10-20 s.
 * - The memories forgotten are those matching when the call runs: the ids are collected, then deleted together;
 *   a memory written meanwhile is not among them (forget again), one deleted meanwhile makes the call collect again.
 * - A dry run answers the count and the first FORGET_PREVIEW_IDS ids (oldest first: as many as one forget may
 *   delete); it writes and charges nothing.
 *   A forget counts one memory write against the hourly quota, however many memories it deletes.
 */
export const MAX_FORGET_PER_CALL = 1_000;
/** Ids a dry run lists at most (its count is exact). */
export const FORGET_PREVIEW_IDS = 1_000;
/** Memories read per list call while collecting ids. */
const PAGE = 500;
/** Collections tried when memories of the filter are deleted by others while one forget runs. */
const ATTEMPTS = 3;
/** The reason a forgotten memory's tombstone and memory.deleted event give. */
export const FORGET_REASON = 'forget';

export type ForgetResult =
  | { dryRun: true; count: number; ids: string[]; idsTruncated: boolean }
  | { dryRun: false; deleted: number; ids: string[] };

export type MemoryForget = ReturnType<typeof createMemoryForget>;

export function createMemoryForget(deps: {
  store: Pick<MemoryStore, 'list' | 'applyAtomically'>;
  limits: QuotaLimits<'memory.forget'>;
  clock: Clock;
}) {
  const { store, clock } = deps;

  /**
   * The ids of up to `want` memories matching, oldest first, and how many match in all: pages of the list, read again
   * when a memory deleted between two pages shifted one past the other (fewer ids than the count said).
   */
  async function collect(scope: Scope, filter: MemoryFilter, want: number): Promise<{ total: number; ids: string[] }> {
    for (let attempt = 1; ; attempt++) {
      const ids = new Set<string>();
      let total: number;
      for (let offset = 0; ; offset += PAGE) {
        const page = await store.list(scope, { filter, limit: Math.min(PAGE, want - ids.size), offset, sortBy: 'created_at', sortOrder: 'asc' });
        for (const m of page.items) ids.add(m.id);
        if (page.items.length === 0 || ids.size >= want || offset + page.items.length >= page.total) {
          total = page.total;
          break;
        }
      }
      if (ids.size >= Math.min(total, want) || attempt >= ATTEMPTS) return { total, ids: [...ids] };
    }
  }

  const tooMany = (total: number) => validationError([{
    field: 'filter', reason: 'too_many',
    message: `matches ${total} memories; one forget deletes at most ${MAX_FORGET_PER_CALL}: narrow the filter (by date, say) and forget in several calls`,
  }], `The filter matches more than ${MAX_FORGET_PER_CALL} memories`);

  return {
    /**
     * Forgets the memories of `scope` that `filter` matches on behalf of `actor` (see above), or with `dryRun`
     * tells which it would. Throws VALIDATION_FAILED for an empty filter or one matching too many.
     */
    async forget(scope: Scope, actor: Principal, filter: MemoryFilter, options: { dryRun: boolean }): Promise<ForgetResult> {
      // Validity never narrows a forget: the filter is the caller's, applied to every memory.
      const matching: MemoryFilter = { ...filter, validAt: undefined };
      if (!hasMemoryFilter(matching)) {
        throw validationError([{
          field: 'filter', reason: 'required',
          message: 'name at least one of type, tags, date or a metadata key: an empty filter would forget every memory of the workspace',
        }], 'A forget needs a filter');
      }
      if (options.dryRun) {
        const { total, ids } = await collect(scope, matching, FORGET_PREVIEW_IDS);
        return { dryRun: true, count: total, ids, idsTruncated: total > ids.length };
      }
      const first = await store.list(scope, { filter: matching, limit: 0, offset: 0, sortBy: 'created_at', sortOrder: 'asc' });
      if (first.total > MAX_FORGET_PER_CALL) throw tooMany(first.total);
      await chargeQuota(deps.limits, 'memory.forget', actor);
      for (let attempt = 1; ; attempt++) {
        const { total, ids } = await collect(scope, matching, MAX_FORGET_PER_CALL + 1);
        if (ids.length > MAX_FORGET_PER_CALL) throw tooMany(total);
        if (ids.length === 0) return { dryRun: false, deleted: 0, ids: [] };
        const at = clock.now();
        const deletion = { at, by: actor.userId, reason: FORGET_REASON };
        const steps: AtomicStep[] = ids.map((id) => ({
          kind: 'delete', id, deletion, events: (m) => [memoryDeleted(m, at, actor.userId, FORGET_REASON)],
        }));
        try {
          await store.applyAtomically(scope, steps);
          return { dryRun: false, deleted: ids.length, ids };
        } catch (err) {
          if (!(err instanceof AtomicStepFailed)) throw err;
          // Deleted by another call since the ids were collected: nothing was written; collect again.
          if (err.error.code === 'NOT_FOUND' && attempt < ATTEMPTS) continue;
          throw err.error;
        }
      }
    },
  };
}
