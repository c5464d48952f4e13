import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createStorage } from '../../src/app/storage.factory.ts';
import { axisVector, makeMemory, scopeA } from '../support/fixtures.ts';
import { describeStorageContract } from './storage.contract.ts';

const dir = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

// A real file per test, as `npm start` uses: WAL, migrations and all.
describeStorageContract('sqlite', async () => createSqliteStorage({ file: join(dir, `contract-${n++}.db`) }));

describe('sqlite specifics', () => {
  it('syncs every commit by default (synchronous=FULL in WAL mode), NORMAL only when configured', async () => {
    const file = join(dir, 'durable.db');
    const byDefault = openSqlite(file);
    expect(byDefault.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(byDefault.pragma('synchronous', { simple: true })).toBe(2);
    byDefault.close();
    const fast = openSqlite(file, { synchronous: 'normal' });
    expect(fast.pragma('synchronous', { simple: true })).toBe(1);
    fast.close();
    // The same setting reaches the store the server and the CLI open from the configuration.
    for (const [value, expected] of [[undefined, 'full'], ['full', 'full'], ['normal', 'normal']] as const) {
      const env = { MNEMO_DATA_DIR: join(dir, 'configured'), ...(value ? { MNEMO_SQLITE_SYNCHRONOUS: value } : {}) };
      const storage = createStorage(loadConfig(env));
      expect(storage.synchronous, value).toBe(expected);
      await storage.close();
    }
  });

  it('reopens a file with its data and schema intact', async () => {
    const file = join(dir, 'reopen.db');
    const first = createSqliteStorage({ file });
    const m = makeMemory(scopeA);
    await first.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    await first.close();
    const second = createSqliteStorage({ file });
    expect(await second.memories.findById(scopeA, m.id)).toEqual(m);
    await second.close();
  });

  it('sees vectors written by another connection to the same file', async () => {
    const file = join(dir, 'two-writers.db');
    const server = createSqliteStorage({ file });
    const cli = createSqliteStorage({ file });
    const query = { vector: axisVector(4, 2), modelId: 'm', limit: 5, minSimilarity: 0.9, filter: {} };
    expect((await server.memories.searchSimilar(scopeA, query)).total).toBe(0);
    await cli.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 2) });
    expect((await server.memories.searchSimilar(scopeA, query)).total).toBe(1);
    await server.close();
    await cli.close();
  });

  it('writes nothing when part of an insert fails', async () => {
    const storage = createSqliteStorage({ file: join(dir, 'atomic.db') });
    const m = makeMemory(scopeA, { tags: ['t'] });
    await storage.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    // A broken vector fails after the row and its tags were written inside the transaction: all must roll back.
    const broken = makeMemory(scopeA, { tags: ['u'] });
    await expect(storage.memories.insert(broken, { modelId: 'm', vector: null as unknown as Float32Array }))
      .rejects.toThrow();
    expect(await storage.memories.findById(scopeA, broken.id)).toBeNull();
    const list = await storage.memories.list(scopeA, { filter: { tagsAny: ['u'] }, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' });
    expect(list.total).toBe(0);
    await storage.close();
  });
});
