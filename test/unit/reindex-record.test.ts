import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createSqliteStorage, type SqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { ManualClock, systemClock } from '../../src/core/clock.ts';
import type { Embedder } from '../../src/core/embeddings/embedder.port.ts';
import {
  REINDEX_STALE_AFTER_MS, reindexRunView, reindexWithRecord, startReindexRecord,
} from '../../src/core/embeddings/reindex-record.ts';
import { axisVector, makeMemory, scopeA } from '../support/fixtures.ts';

/**
 * The reindex run's progress record as the run writes it (core/embeddings/reindex-record.ts): at its start, throttled
 * progress, a heartbeat while the embedder is slow, its end and why; a run replaced by a later one writes nothing more.
 * On a real SQLite store; the repository itself is covered on every store by the storage contract.
 */
let storage: SqliteStorage;
beforeEach(() => { storage = createSqliteStorage({ file: ':memory:' }); });
afterEach(async () => { await storage.close(); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const run = { modelId: 'hashing:v1-16', dims: 16, filter: {} };
async function fill(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await storage.memories.insert(makeMemory(scopeA, { content: `memory ${i}` }), { modelId: 'old:4', vector: axisVector(4, i % 4) });
}
const deps = (embedder: Embedder, clock = systemClock) => ({
  memories: storage.memories, records: storage.reindexProgress, clock, embedder, textOf: (t: string, c: string) => `${t}\n${c}`,
});

describe('reindex progress record, as a run writes it', () => {
  it('writes the first counts at once, later ones at most once a second, and the end', async () => {
    const clock = new ManualClock();
    const recorder = await startReindexRecord(storage.reindexProgress, clock, run, { heartbeatMs: 60_000 });
    expect(await storage.reindexProgress.latest()).toMatchObject({ runId: recorder.runId, state: 'running', done: 0, total: 0, startedAt: clock.now() });
    recorder.progress({ done: 2, total: 10, written: 0 });
    await sleep(10);
    expect(await storage.reindexProgress.latest()).toMatchObject({ done: 2, total: 10, written: 0 });
    clock.advance(500);
    recorder.progress({ done: 4, total: 10, written: 2 });
    await sleep(10);
    expect((await storage.reindexProgress.latest())?.done).toBe(2);
    clock.advance(500);
    recorder.progress({ done: 6, total: 10, written: 4 });
    await sleep(10);
    expect(await storage.reindexProgress.latest()).toMatchObject({ done: 6, written: 4, updatedAt: clock.now(), finishedAt: null });
    clock.advance(100);
    await recorder.finish({ state: 'complete', modelId: run.modelId, done: 10, total: 10, written: 8 }, false);
    expect(await storage.reindexProgress.latest()).toMatchObject({
      state: 'complete', stopReason: null, done: 10, total: 10, written: 8, updatedAt: clock.now(), finishedAt: clock.now(),
    });
  });

  it('beats while a batch is slow, and stops beating at its end', async () => {
    const recorder = await startReindexRecord(storage.reindexProgress, systemClock, run, { heartbeatMs: 20 });
    const first = (await storage.reindexProgress.latest())!.updatedAt.getTime();
    // Nothing but the heartbeat writes meanwhile (a busy machine may delay its timer: wait for it, up to 5 s).
    let beating = (await storage.reindexProgress.latest())!;
    for (const deadline = Date.now() + 5_000; beating.updatedAt.getTime() === first && Date.now() < deadline;) {
      await sleep(20);
      beating = (await storage.reindexProgress.latest())!;
    }
    expect(beating.state).toBe('running');
    expect(beating.updatedAt.getTime()).toBeGreaterThan(first);
    await recorder.finish({ state: 'limited', modelId: run.modelId, done: 3, total: 9, written: 3 }, false);
    const end = (await storage.reindexProgress.latest())!;
    expect(end).toMatchObject({ state: 'stopped', stopReason: 'limit', done: 3, total: 9 });
    await sleep(150);
    expect(await storage.reindexProgress.latest()).toEqual(end);
  });

  it('a run replaced by a later one writes nothing more', async () => {
    const first = await startReindexRecord(storage.reindexProgress, systemClock, run, { heartbeatMs: 60_000 });
    const second = await startReindexRecord(storage.reindexProgress, systemClock, { ...run, filter: { workspace: 'w' } }, { heartbeatMs: 60_000 });
    await first.finish({ state: 'complete', modelId: run.modelId, done: 1, total: 1, written: 1 }, false);
    expect(await storage.reindexProgress.latest()).toMatchObject({ runId: second.runId, state: 'running', filter: { workspace: 'w' } });
    await second.fail();
    expect(await storage.reindexProgress.latest()).toMatchObject({ runId: second.runId, state: 'stopped', stopReason: 'failed' });
  });

  it('reads a running record whose heartbeat is older than the staleness as stopped', async () => {
    const clock = new ManualClock();
    await startReindexRecord(storage.reindexProgress, clock, run, { heartbeatMs: 60_000 });
    const record = (await storage.reindexProgress.latest())!;
    expect(reindexRunView(record, new Date(clock.now().getTime() + REINDEX_STALE_AFTER_MS))).toEqual({ state: 'running', stopReason: null });
    expect(reindexRunView(record, new Date(clock.now().getTime() + REINDEX_STALE_AFTER_MS + 1))).toEqual({ state: 'stopped', stopReason: 'no_heartbeat' });
    // An ended run stays as it ended, however old.
    expect(reindexRunView({ ...record, state: 'complete' }, new Date(clock.now().getTime() + 10 * REINDEX_STALE_AFTER_MS)))
      .toEqual({ state: 'complete', stopReason: null });
  });
});

describe('reindexWithRecord', () => {
  it('records a complete run with its counts', async () => {
    await fill(5);
    const result = await reindexWithRecord(deps(createHashingEmbedder({ dimensions: 16 })), { filter: {}, batchSize: 2 });
    expect(result).toMatchObject({ state: 'complete', done: 5, total: 5, written: 5 });
    expect(await storage.reindexProgress.latest()).toMatchObject({
      modelId: 'hashing:v1-16', dims: 16, state: 'complete', stopReason: null, done: 5, total: 5, written: 5,
    });
  });

  it('records an interrupted run as stopped (interrupted), and an embedder failure as stopped (failed)', async () => {
    await fill(6);
    const controller = new AbortController();
    const hashing = createHashingEmbedder({ dimensions: 16 });
    // Ctrl-C arrives during the first batch: the batch is written, then the run stops.
    const interrupted: Embedder = { ...hashing, embed: async (texts) => { controller.abort(); return hashing.embed(texts); } };
    const stopped = await reindexWithRecord(deps(interrupted), { filter: {}, batchSize: 2, signal: controller.signal });
    expect(stopped).toMatchObject({ state: 'stopped', written: 2 });
    expect(await storage.reindexProgress.latest()).toMatchObject({ state: 'stopped', stopReason: 'interrupted', done: 2, total: 6, written: 2 });

    let calls = 0;
    const failing: Embedder = { ...hashing, embed: async (texts) => { if (++calls === 2) throw new Error('provider down'); return hashing.embed(texts); } };
    await expect(reindexWithRecord(deps(failing), { filter: {}, batchSize: 2 })).rejects.toThrow('provider down');
    expect(await storage.reindexProgress.latest()).toMatchObject({ state: 'stopped', stopReason: 'failed', done: 4, total: 6, written: 2 });
  });
});
