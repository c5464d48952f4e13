/**
 * The storage contract's reindex progress record (`/health`'s `embeddings.reindex_run`). Called from
 * describeStorageContract, so every adapter runs it unchanged.
 */
import { describe, expect, it } from 'vitest';
import type { ReindexProgressRecord } from '../../src/core/embeddings/reindex-progress.repository.ts';
import type { Storage } from '../../src/core/storage.port.ts';

const at = (s: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, s, 250));
const run = (over: Partial<ReindexProgressRecord> = {}): ReindexProgressRecord => ({
  runId: 'run-1', modelId: 'test:new-4', dims: 4, filter: {}, state: 'running', stopReason: null, done: 0, total: 0, written: 0,
  startedAt: at(0), updatedAt: at(0), finishedAt: null, ...over,
});

export function describeReindexProgressContract(current: () => Storage, second?: () => Promise<Storage>): void {
  describe('reindex progress record', () => {
    it('is absent until a run starts, then reads back as written, filter and times included', async () => {
      const records = current().reindexProgress;
      expect(await records.latest()).toBeNull();
      const first = run({ filter: { tenantId: 'acme', mode: 'test', workspace: 'side' } });
      await records.start(first);
      expect(await records.latest()).toEqual(first);
    });

    it('takes a run\'s progress and its end, and only while it is the store\'s last run', async () => {
      const records = current().reindexProgress;
      await records.start(run());
      const progress = { state: 'running' as const, stopReason: null, done: 40, total: 100, written: 38, updatedAt: at(5), finishedAt: null };
      expect(await records.update('run-1', progress)).toBe(true);
      expect(await records.latest()).toEqual(run(progress));
      const stopped = { state: 'stopped' as const, stopReason: 'limit' as const, done: 64, total: 100, written: 62, updatedAt: at(9), finishedAt: at(9) };
      expect(await records.update('run-1', stopped)).toBe(true);
      expect(await records.latest()).toEqual(run(stopped));

      // A second run replaces the record, whatever its model or filter; the first one's late writes change nothing.
      const next = run({ runId: 'run-2', modelId: 'test:other-8', dims: 8, filter: { workspace: 'w' }, startedAt: at(20), updatedAt: at(20) });
      await records.start(next);
      expect(await records.latest()).toEqual(next);
      expect(await records.update('run-1', { ...stopped, state: 'complete', stopReason: null })).toBe(false);
      expect(await records.latest()).toEqual(next);
      const complete = { state: 'complete' as const, stopReason: null, done: 100, total: 100, written: 36, updatedAt: at(30), finishedAt: at(30) };
      expect(await records.update('run-2', complete)).toBe(true);
      expect(await records.latest()).toEqual({ ...next, ...complete });
    });

    // Only where the adapter's test can open a second connection to the same store.
    it.skipIf(!second)('is one record per store: another connection sees the run and its progress', async () => {
      const other = await second!();
      try {
        await current().reindexProgress.start(run({ runId: 'run-3' }));
        expect((await other.reindexProgress.latest())?.runId).toBe('run-3');
        const update = { state: 'running' as const, stopReason: null, done: 7, total: 9, written: 7, updatedAt: at(3), finishedAt: null };
        expect(await other.reindexProgress.update('run-3', update)).toBe(true);
        expect(await current().reindexProgress.latest()).toEqual(run({ runId: 'run-3', ...update }));
      } finally {
        await other.close();
      }
    });
  });
}
