import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteMemoryRepository } from '../../src/adapters/storage/sqlite/sqlite-memory.repository.ts';
import { SqliteOutbox } from '../../src/adapters/storage/sqlite/sqlite-outbox.ts';
import { SqliteVectorCache } from '../../src/adapters/storage/sqlite/sqlite-vector-cache.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { ApiKeyRecord } from '../../src/core/api-keys/api-key.types.ts';
import { axisVector, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';

/**
 * The server's vector indexes against writes from another connection (the CLI): a workspace's index is reloaded when
 * that workspace changed, and only then (migration 15's workspace versions).
 */
const dir = mkdtempSync(join(tmpdir(), 'mnemo-vector-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function server(file: string, threads = 0) {
  const db = openSqlite(file);
  const cache = new SqliteVectorCache(db, threads);
  const memories = createSqliteMemoryRepository(db, new SqliteOutbox(db), undefined, cache);
  return { db, cache, memories, close: async () => { await memories.close(); db.close(); } };
}

const query = (axis: number) => ({ vector: axisVector(4, axis), modelId: 'm', limit: 10, minSimilarity: 0.9, filter: {} });
const keyRecord = (): ApiKeyRecord => ({
  id: `key_${randomUUID().replace(/-/g, '')}`, tenantId: 't9', userId: 'u1', name: 'cli', tier: 'pro', mode: 'live',
  scopes: ['memories:read'], displayPrefix: 'mnemo_live_abcd', digest: randomUUID().replace(/-/g, '').padEnd(64, '0'),
  createdAt: new Date(), expiresAt: null, revokedAt: null, replacedBy: null,
});

describe('SQLite vector cache: per-workspace invalidation', () => {
  it('keeps other workspaces\' indexes across foreign writes, and reloads the written workspace on its next search', async () => {
    const file = join(dir, 'two.db');
    const srv = server(file);
    const cli = createSqliteStorage({ file });
    await srv.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 0) });
    await srv.memories.insert(makeMemory(scopeB), { modelId: 'm', vector: axisVector(4, 0) });
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(1);
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(1);
    const a = await srv.cache.get(scopeA, 'm', 4);
    const b = await srv.cache.get(scopeB, 'm', 4);

    // `mnemo keys create` from another process: no workspace changed, no index dropped.
    await cli.apiKeys.insert(keyRecord());
    expect(await srv.cache.get(scopeA, 'm', 4)).toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);

    // This process's own write is applied in place.
    await srv.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 0) });
    expect(await srv.cache.get(scopeA, 'm', 4)).toBe(a);
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(2);

    // Another connection writes to A: the next search in A sees it (A reloaded); B keeps its index.
    await cli.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 0) });
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(3);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);

    // ... and a foreign delete or vector update in B is seen too.
    const [bOnly] = (await srv.memories.searchSimilar(scopeB, query(0))).hits;
    await cli.memories.update(scopeB, bOnly!.memory.id, {}, new Date(), 'u', { modelId: 'm', vector: axisVector(4, 1) });
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(0);
    expect((await srv.memories.searchSimilar(scopeB, query(1))).total).toBe(1);
    await cli.memories.delete(scopeB, bOnly!.memory.id);
    expect((await srv.memories.searchSimilar(scopeB, query(1))).total).toBe(0);
    await cli.close();
    await srv.close();
  });

  it('maintenance writes (reindex vectors, dropping other models, import) reload only the workspaces they touched', async () => {
    const srv = server(join(dir, 'maintenance.db'));
    const inA = makeMemory(scopeA);
    await srv.memories.insert(inA, { modelId: 'm', vector: axisVector(4, 0) });
    await srv.memories.insert(makeMemory(scopeB), { modelId: 'm', vector: axisVector(4, 0) });
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(1);
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(1);
    let a = await srv.cache.get(scopeA, 'm', 4);
    const b = await srv.cache.get(scopeB, 'm', 4);

    // `mnemo reindex` re-embeds A's memory with model m (new vector): A reloads and sees it, B's matrix stays.
    const written = await srv.memories.putVectors([{ scope: scopeA, id: inA.id, title: inA.title, content: inA.content, vector: { modelId: 'm', vector: axisVector(4, 2) } }]);
    expect(written).toBe(1);
    expect((await srv.memories.searchSimilar(scopeA, query(2))).total).toBe(1);
    expect((await srv.memories.searchSimilar(scopeA, query(0))).total).toBe(0);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);

    // Dropping another model's vectors in A only.
    a = await srv.cache.get(scopeA, 'm', 4);
    await srv.memories.putVectors([{ scope: scopeA, id: inA.id, title: inA.title, content: inA.content, vector: { modelId: 'old', vector: axisVector(4, 1) } }]);
    expect(await srv.memories.dropOtherVectors({ tenantId: scopeA.tenantId }, 'm')).toBe(1);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);
    expect((await srv.memories.searchSimilar(scopeA, query(2))).total).toBe(1);

    // `mnemo import` into A: A sees the imported memory, B keeps its matrix.
    a = await srv.cache.get(scopeA, 'm', 4);
    const imported = await srv.memories.importMemories([{ memory: makeMemory(scopeA), vectors: [{ modelId: 'm', vector: axisVector(4, 3) }] }]);
    expect(imported.inserted).toBe(1);
    expect((await srv.memories.searchSimilar(scopeA, query(3))).total).toBe(1);
    expect(await srv.cache.get(scopeA, 'm', 4)).not.toBe(a);
    expect(await srv.cache.get(scopeB, 'm', 4)).toBe(b);
    expect((await srv.memories.searchSimilar(scopeB, query(0))).total).toBe(1);
    await srv.close();
  });

  it('streams a workspace bigger than one load batch, warms every workspace at start, and scans in workers', async () => {
    const file = join(dir, 'big.db');
    const writer = createSqliteStorage({ file, synchronous: 'normal' });
    // Past one load batch (2048) per workspace, and big enough (rows x dims) to be scanned in the workers.
    const rows = 4200;
    const dims = 128;
    for (let i = 0; i < rows; i++) {
      await writer.memories.insert(makeMemory(i % 2 === 0 ? scopeA : scopeB), { modelId: 'm', vector: axisVector(dims, i % 4, (i + 1) % 4, (i % 97) / 100) });
    }
    await writer.close();
    const srv = server(file, 2);
    await srv.cache.warmUp();
    const a = await srv.cache.get(scopeA, 'm', dims);
    const b = await srv.cache.get(scopeB, 'm', dims);
    expect(a.size * dims).toBeGreaterThanOrEqual(srv.cache.pool()!.inlineBelow); // not scanned on the event loop
    expect(a.size).toBe(rows / 2);
    expect(b.size).toBe(rows / 2);
    const inline = server(file, 0);
    for (const axis of [0, 1, 2, 3]) {
      for (const scope of [scopeA, scopeB]) {
        const q = { ...query(axis), vector: axisVector(dims, axis), minSimilarity: 0.5, limit: 7 };
        const viaWorkers = await srv.memories.searchSimilar(scope, q);
        const onLoop = await inline.memories.searchSimilar(scope, q);
        expect(viaWorkers.hits.map((h) => [h.memory.id, h.cosine])).toEqual(onLoop.hits.map((h) => [h.memory.id, h.cosine]));
        expect(viaWorkers.total).toBe(onLoop.total);
        expect(viaWorkers.total).toBeGreaterThan(0);
      }
    }
    expect(await srv.cache.get(scopeA, 'm', dims)).toBe(a);
    await inline.close();
    await srv.close();
    expect(srv.cache.pool()).toBeNull(); // closed: no new threads start
  });
});
